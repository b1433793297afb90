import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/text/redact.js';
import { buildToolEnv } from '../../src/run/tool-env.js';

describe('secrets', () => {
  it('redacts API-key-shaped strings, shortened ones too', () => {
    // Made from parts, so that this file holds no token-shaped literal.
    const keys = ['sk-ant-' + 'api03-abcdefghijklmnop', 'gh' + 'p_abcdefghijklmnopqrstuvwx', 'AK' + 'IAABCDEFGHIJKLMNOP'];
    const out = redactSecrets(`key ${keys[0]} and ${keys[1]} and ${keys[2]}`);
    expect(out).toBe('key [REDACTED anthropic-api-key] and [REDACTED github-token] and [REDACTED aws-access-token]');
  });

  it('builds a tool environment with no key, token or secret unless the ticket names it', () => {
    const host = { PATH: '/bin', HOME: '/h', ANTHROPIC_API_KEY: 'k', GITHUB_TOKEN: 't', DB_PASSWORD: 'p', NPM_TOKEN: 'n', OTHER: 'o' };
    const env = buildToolEnv(host, { NPM_TOKEN: true }, { tmpDir: '/tmp/x' });
    expect(env).toMatchObject({ PATH: '/bin', HOME: '/h', NPM_TOKEN: 'n', TMPDIR: '/tmp/x' });
    expect(env).not.toHaveProperty('ANTHROPIC_API_KEY');
    expect(env).not.toHaveProperty('GITHUB_TOKEN');
    expect(env).not.toHaveProperty('DB_PASSWORD');
    expect(env).not.toHaveProperty('OTHER');
  });
});
