import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT, runCli } from '../support/cli.js';
import { extraWorktrees, gitIn, makeDemoRepo, tempDir } from '../support/repo.js';

// Every output path is tried before the first ticket starts (exit 64, naming the option,
// the path and what is wrong), and a reader that goes away does not end the run.

const BIN = path.join(PROJECT_ROOT, 'bin', 'corral.cjs');
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

describe('a reader that goes away', () => {
  /** Runs the CLI with its stdout (and, after the first progress line, its stderr) closed by the reader. */
  function runWithClosedPipes(repo: string, args: string[]): Promise<{ code: number | null; stderr: string }> {
    const child = spawn('node', [BIN, ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', XDG_CONFIG_HOME: NO_USER_CONFIG } });
    // `corral run --json | head -n 0`: the reader of stdout is gone before the first line.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      // `2>&1 | head -n 1`: stderr's reader goes after the first line.
      if (stderr.includes('\n')) child.stderr.destroy();
    });
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  }

  it('a passing run still exits 0 with its patch written and its worktree gone', async () => {
    const repo = makeDemoRepo();
    const { code, stderr } = await runWithClosedPipes(repo, ['run', '--json', TICKET]);
    expect(stderr).not.toMatch(/EPIPE/);
    expect(code).toBe(0);
    const runs = readdirSync(path.join(repo, '.corral', 'runs'));
    expect(runs).toHaveLength(1);
    const patch = readFileSync(path.join(repo, '.corral', 'runs', runs[0]!, 'patch.diff'), 'utf8');
    expect(patch).toContain('fees.js');
    expect(corralBranches(repo)).toContain('corral/cap-fine');
    expect(extraWorktrees(repo)).toEqual([]);
  });
});
