import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/report/redact.js';
import { buildToolEnv } from '../../src/run/tool-env.js';

describe('secrets', () => {
  it('redacts API-key-shaped strings', () => {
    const out = redactSecrets('key sk-ant-api03-abcdefghijklmnop and ghp_abcdefghijklmnopqrstuvwx and AKIAABCDEFGHIJKLMNOP');
    expect(out).not.toMatch(/abcdefghijklmnop|ABCDEFGHIJKLMNOP/);
    expect(out).toContain('[REDACTED]');
  });

  it('builds a tool environment with no key, token or secret unless the ticket names it', () => {
    const host = { PATH: '/bin', HOME: '/h', ANTHROPIC_API_KEY: 'k', GITHUB_TOKEN: 't', DB_PASSWORD: 'p', NPM_TOKEN: 'n', OTHER: 'o' };
    const env = buildToolEnv(host, ['NPM_TOKEN'], '/tmp/x');
    expect(env).toMatchObject({ PATH: '/bin', HOME: '/h', NPM_TOKEN: 'n', TMPDIR: '/tmp/x' });
    expect(env).not.toHaveProperty('ANTHROPIC_API_KEY');
    expect(env).not.toHaveProperty('GITHUB_TOKEN');
    expect(env).not.toHaveProperty('DB_PASSWORD');
    expect(env).not.toHaveProperty('OTHER');
  });
});
