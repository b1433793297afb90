import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareVersions, findAgentCli } from '../../src/agents/find-cli.js';
import { tempDir } from '../support/repo.js';

function fakeCli(version: string): string {
  const dir = tempDir('corral-cli-');
  const file = path.join(dir, 'claude');
  writeFileSync(file, `#!/bin/sh\necho "${version}"\n`);
  chmodSync(file, 0o755);
  return file;
}

describe('finding an agent CLI', () => {
  it('compares versions by number, not text', () => {
    expect(compareVersions('2.10.0', '2.9.9')).toBeGreaterThan(0);
    expect(compareVersions('2.1.0', '2.1.0')).toBe(0);
    expect(compareVersions('0.99.1', '0.124.0')).toBeLessThan(0);
  });

  it('takes one new enough, by path or on PATH, and says which version is needed otherwise', async () => {
    const good = fakeCli('2.1.328 (Claude Code)');
    expect(await findAgentCli('claude-code', good, { PATH: '/usr/bin:/bin' })).toMatchObject({ ok: true, cli: { version: '2.1.328' } });
    expect(await findAgentCli('claude-code', undefined, { PATH: `${path.dirname(good)}:/usr/bin:/bin` })).toMatchObject({ ok: true, cli: { file: good } });
    const old = await findAgentCli('claude-code', fakeCli('1.0.3 (Claude Code)'), { PATH: '/usr/bin:/bin' });
    expect(old).toMatchObject({ ok: false });
    expect(!old.ok && old.message).toContain('is version 1.0.3; claude-code 2.1.0 or newer is needed');
    const none = await findAgentCli('codex', undefined, { PATH: '/nonexistent' });
    expect(!none.ok && none.message).toBe('agent codex: `codex` is not on PATH; codex 0.124.0 or newer is needed');
    const silent = await findAgentCli('codex', fakeCli('no version here'), { PATH: '/usr/bin:/bin' });
    expect(!silent.ok && silent.message).toContain('without a version');
  });
});
