import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { extraWorktrees, gitIn, makeDemoRepo, tempDir } from '../support/repo.js';

// Every output path is tried before the first ticket starts (exit 64, naming the option,
// the path and what is wrong).

const TICKET = 'tickets/cap-fine.yaml';

function corralBranches(repo: string): string {
  return gitIn(repo, ['branch', '--list', 'corral/*']).trim();
}

/** Nothing of a run: no run record, no branch, no worktree. */
function expectNothingRan(repo: string): void {
  expect(existsSync(path.join(repo, '.corral'))).toBe(false);
  expect(corralBranches(repo)).toBe('');
  expect(extraWorktrees(repo)).toEqual([]);
}

describe('output paths are checked before any ticket runs', () => {
  const cases: { name: string; args: string[]; env?: (repo: string) => Record<string, string>; message: RegExp }[] = [
    { name: '--runs-dir naming a file', args: ['--runs-dir', 'notes.txt'], message: /--runs-dir notes\.txt: .*notes\.txt is a file, not a folder/ },
    { name: '--runs-dir below a file', args: ['--runs-dir', 'notes.txt/runs'], message: /--runs-dir notes\.txt\/runs: .*notes\.txt is a file, not a folder/ },
    { name: '--runs-dir under /sys', args: ['--runs-dir', '/sys/x'], message: /--runs-dir \/sys\/x: cannot write in \/sys/ },
    { name: '--runs-dir under /proc', args: ['--runs-dir', '/proc/nope'], message: /--runs-dir \/proc\/nope: cannot write in \/proc/ },
    { name: '--junit naming a folder', args: ['--junit', 'tickets'], message: /--junit tickets: tickets is a folder; name the report file/ },
    { name: '--junit in an unwritable folder', args: ['--junit', '/sys/junit.xml'], message: /--junit \/sys\/junit\.xml: cannot write in \/sys/ },
    { name: '--junit in a missing folder', args: ['--junit', 'nowhere/junit.xml'], message: /--junit nowhere\/junit\.xml: the folder nowhere does not exist/ },
    { name: 'TMPDIR naming a missing folder', args: [], env: () => ({ TMPDIR: '/nonexistent-corral-tmp' }), message: /TMPDIR=\/nonexistent-corral-tmp: the folder \/nonexistent-corral-tmp does not exist; create it, or unset TMPDIR/ },
    { name: 'TMPDIR naming a file', args: [], env: (repo) => ({ TMPDIR: path.join(repo, 'notes.txt') }), message: /TMPDIR=.*notes\.txt: .*notes\.txt is a file, not a folder/ },
  ];

  for (const c of cases) {
    it(`${c.name}: exit 64, said plainly, nothing ran`, async () => {
      const repo = makeDemoRepo();
      writeFileSync(path.join(repo, 'notes.txt'), 'not a folder\n');
      const env = c.env?.(repo);
      const result = await runCli(['run', TICKET, '--json', ...c.args], { cwd: repo, ...(env ? { env } : {}), timeoutMs: 30_000 });
      expect(result.stderr).toMatch(c.message);
      expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(result.exitCode).toBe(64);
      expect(result.stdout).toBe('');
      expectNothingRan(repo);
    });
  }

  it('a --runs-dir that does not exist yet is made, and the run passes', async () => {
    const repo = makeDemoRepo();
    const runsDir = path.join(tempDir(), 'deep', 'runs');
    const result = await runCli(['run', TICKET, '--json', '--runs-dir', runsDir], { cwd: repo });
    expect(result.exitCode).toBe(0);
    expect(readdirSync(runsDir)).toHaveLength(1);
    // The probe leaves nothing behind.
    expect(readdirSync(path.dirname(runsDir))).toEqual(['runs']);
  });
});
