import { execa, type ResultPromise } from 'execa';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { commitFiles, deadPid, extraWorktrees, gitIn, repoWithFiles, tempDir } from '../support/repo.js';

// No path removes a worktree whose changes are not in a patch on disk: a second Ctrl-C, a
// SIGHUP, the next run and `corral clean` after a SIGKILL all save the patch first (the
// agent's edits and its untracked files alike) and say where it is.

const BIN = path.join(PROJECT_ROOT, 'bin/corral.cjs');

// The agent edits a tracked file, adds an untracked one, then runs a command that takes long enough to be signalled.
const REPLAY = [
  'turns:',
  '  - tools:',
  '      - Write: {file_path: src/a.txt, content: "changed by the agent\\n"}',
  '      - Write: {file_path: src/notes.txt, content: "half done\\n"}',
  '      - Bash: {command: "echo started; sleep 600"}',
  '',
].join('\n');

function slowRepo(): string {
  return repoWithFiles({ 'src/a.txt': 'original\n', 'ticket.yaml': 'task: t\nallow: ["**"]\nmodel: replay:replay.yaml\nsandbox: auto\n', 'replay.yaml': REPLAY }, 'corral-salvage-');
}

/** Starts `corral run ticket.yaml --json` and resolves once the agent's two files are in its worktree. */
async function startSlowRun(repo: string, env: Record<string, string> = {}): Promise<{ child: ResultPromise; worktree: string }> {
  const child = execa('node', [BIN, 'run', 'ticket.yaml', '--json'], { cwd: repo, reject: false, stdin: 'ignore', env: { NO_COLOR: '1', XDG_CONFIG_HOME: NO_USER_CONFIG, ...env } });
  await new Promise<void>((resolve) => {
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('step 1') && seen.includes('worktree at')) resolve();
    });
  });
  const worktree = extraWorktrees(repo)[0]!;
  // Its content, not its name: the Write tool creates the file before it writes it, and a kill in between leaves it empty.
  await vi.waitFor(() => expect(readFileSync(path.join(worktree, 'src/notes.txt'), 'utf8')).toBe('half done\n'), { timeout: 30_000, interval: 20 });
  return { child, worktree };
}

/** The one run directory under the repository's `.corral/runs`. */
function onlyRunDir(repo: string): string {
  const runs = readdirSync(path.join(repo, '.corral/runs')).filter((name) => !name.startsWith('.'));
  expect(runs).toHaveLength(1);
  return path.join(repo, '.corral/runs', runs[0]!);
}

/** The patch holds the tracked edit and the untracked file, and applies to the base. */
function expectAgentWork(repo: string, patchFile: string): void {
  const patch = readFileSync(patchFile, 'utf8');
  expect(patch).toContain('+changed by the agent');
  expect(patch).toContain('+++ b/src/notes.txt');
  expect(patch).toContain('+half done');
  gitIn(repo, ['apply', '--check', patchFile]);
}

describe('a second Ctrl-C before the patch is written', () => {
  it('saves the patch in the run directory, says where, removes the worktree and its lock, exits 130', async () => {
    const repo = slowRepo();
    const { child, worktree } = await startSlowRun(repo);
    // Two signals in one go: the second is handled before the run could write its patch.
    child.kill('SIGINT');
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(130);
    const patchFile = path.join(onlyRunDir(repo), 'patch.diff');
    expect(String(result.stderr)).toContain(`the work so far is in ${patchFile}`);
    expectAgentWork(repo, patchFile);
    expect(extraWorktrees(repo)).toEqual([]);
    expect(existsSync(worktree)).toBe(false);
    expect(existsSync(`${worktree}.tmp`)).toBe(false);
    expect(existsSync(path.join(repo, '.git/corral-worktrees.lock'))).toBe(false);
    expect(readdirSync(path.join(repo, '.corral/runs', path.basename(path.dirname(patchFile)))).filter((name) => name.includes('.partial'))).toEqual([]);
  });
});

describe('SIGHUP (a closed terminal, a dropped SSH session)', () => {
  it('is handled like SIGTERM: the run is interrupted, its patch kept, the end recorded, exit 130', async () => {
    const repo = slowRepo();
    const { child, worktree } = await startSlowRun(repo);
    child.kill('SIGHUP');
    const result = await child;
    expect(result.exitCode).toBe(130);
    const report = runReport(String(result.stdout));
    expect(report.status).toBe('interrupted');
    expectAgentWork(repo, report.patch);
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { type: string; status?: string });
    expect(events.at(-1)).toMatchObject({ type: 'end', status: 'interrupted' });
    expect(extraWorktrees(repo)).toEqual([]);
    expect(existsSync(worktree)).toBe(false);
  });
});

describe('a run killed with SIGKILL', () => {
  it('has its patch saved by `corral clean` before its worktree goes', async () => {
    const repo = slowRepo();
    const { child, worktree } = await startSlowRun(repo);
    child.kill('SIGKILL');
    await child;
    expect(extraWorktrees(repo)).toEqual([worktree]);
    // As a kill while the run wrote its patch would leave it: a temp file, never the patch.
    const partial = path.join(onlyRunDir(repo), `patch.diff.${deadPid()}.partial`);
    writeFileSync(partial, 'diff --git a/src/a.txt b/src/a.txt\n--- a/src/a');
    const clean = await runCli(['clean'], { cwd: repo });
    expect(clean.exitCode, clean.stderr).toBe(0);
    const patchFile = path.join(onlyRunDir(repo), 'patch.diff');
    expect(existsSync(partial)).toBe(false);
    expect(clean.stdout).toContain(`removed ${worktree}; its work is in ${patchFile}`);
    expectAgentWork(repo, patchFile);
    expect(extraWorktrees(repo)).toEqual([]);
    expect(existsSync(worktree)).toBe(false);
    expect(existsSync(`${worktree}.tmp`)).toBe(false);
  });

  it('has its patch saved by the next run, which says where', async () => {
    const repo = slowRepo();
    const { child, worktree } = await startSlowRun(repo);
    child.kill('SIGKILL');
    await child;
    const killedRunDir = onlyRunDir(repo);
    // The next run: a ticket that changes nothing.
    mkdirSync(path.join(repo, 'next'));
    commitFiles(repo, { 'next/ticket.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nmodel: replay:replay.yaml\nsandbox: auto\n', 'next/replay.yaml': 'turns:\n  - text: Done.\n' });
    const run = await runCli(['run', 'next/ticket.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    const patchFile = path.join(killedRunDir, 'patch.diff');
    expect(report.warnings).toContain(`a killed run's worktree was removed: ${worktree}; its work is in ${patchFile}`);
    expectAgentWork(repo, patchFile);
    expect(extraWorktrees(repo)).toEqual([]);
  });
});

describe('corral clean --force', () => {
  it("takes a worktree locked by another host's corral, after saying so, and saves its patch first", async () => {
    const repo = slowRepo();
    const { child, worktree } = await startSlowRun(repo);
    child.kill('SIGKILL');
    await child;
    // As a CI container's corral would have left it: locked under another hostname.
    gitIn(repo, ['worktree', 'unlock', worktree]);
    gitIn(repo, ['worktree', 'lock', '--reason', `corral pid=${deadPid()} host=ci-container-${hostname()}`, worktree]);

    const plain = await runCli(['clean'], { cwd: repo });
    expect(plain.exitCode, plain.stderr).toBe(0);
    expect(plain.stdout).toContain('1 locked by another host left alone (corral clean --force takes them)');
    expect(extraWorktrees(repo)).toEqual([worktree]);

    const forced = await runCli(['clean', '--force'], { cwd: repo });
    expect(forced.exitCode, forced.stderr).toBe(0);
    const patchFile = path.join(onlyRunDir(repo), 'patch.diff');
    const lines = forced.stdout.split('\n');
    const announced = lines.findIndex((line) => line.startsWith(`taking ${worktree} (locked by pid `) && line.includes(`on host ci-container-${hostname()}`));
    const removed = lines.indexOf(`removed ${worktree}; its work is in ${patchFile}`);
    expect(announced).toBeGreaterThanOrEqual(0);
    expect(removed).toBeGreaterThan(announced);
    expectAgentWork(repo, patchFile);
    expect(extraWorktrees(repo)).toEqual([]);
  });

  it("takes a worktree whose lock names a pid that is now another process's", async () => {
    const repo = slowRepo();
    const { child, worktree } = await startSlowRun(repo);
    child.kill('SIGKILL');
    await child;
    // This test's own pid, alive, but not the process that took the lock (another start time).
    gitIn(repo, ['worktree', 'unlock', worktree]);
    gitIn(repo, ['worktree', 'lock', '--reason', `corral pid=${process.pid} host=${hostname()} start=1`, worktree]);
    const clean = await runCli(['clean'], { cwd: repo });
    expect(clean.exitCode, clean.stderr).toBe(0);
    expect(clean.stdout).toContain(`removed ${worktree}; its work is in ${path.join(onlyRunDir(repo), 'patch.diff')}`);
    expect(extraWorktrees(repo)).toEqual([]);
  });
});

describe("temp dirs and locks of dead corral processes", () => {
  it('are found and removed by `corral clean` and by the next run; a live process keeps its own', async () => {
    for (const how of ['clean', 'next run'] as const) {
      const repo = repoWithFiles({ 'ticket.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nmodel: replay:replay.yaml\nsandbox: auto\n', 'replay.yaml': 'turns:\n  - text: Done.\n' }, 'corral-temps-');
      const tmp = tempDir('corral-tmpdir-');
      const dead = deadPid();
      // The git launcher's files, snapshot indexes, sandbox probes; the same as an older corral named them; a run's temp dir.
      const deadOnes = [`corral-@git+${dead}-gT7hJ2`, `corral-@index+${dead}-aB3dE6`, `corral-@probe+${dead}-Zz9yY8`, `corral-git+${dead}-hU8iK3`, `corral-index+${dead}-cD4eF5`, `corral-probe+${dead}-Xx8wW7`, `corral-fix-42+${dead}-Qq1wW2.tmp`].map((name) => path.join(tmp, name));
      const liveOnes = [`corral-@git+${process.pid}-gT7hJ2`, `corral-@index+${process.pid}-aB3dE6`, `corral-fix-42+${process.pid}-Qq1wW2.tmp`].map((name) => path.join(tmp, name));
      for (const dir of [...deadOnes, ...liveOnes]) mkdirSync(dir);
      // A dead run's worktree of a ticket named "index": salvaged through git, never removed as a temp dir.
      const worktreeNamedIndex = path.join(tmp, `corral-index+${dead}-eF6gH7`);
      mkdirSync(worktreeNamedIndex);
      writeFileSync(path.join(worktreeNamedIndex, '.git'), 'gitdir: /elsewhere/.git/worktrees/index\n');
      // The repository's worktree lock, as a second Ctrl-C used to leave it.
      const lock = path.join(repo, '.git/corral-worktrees.lock');
      writeFileSync(lock, `${dead} ${hostname()}\n`);
      const run = how === 'clean' ? await runCli(['clean'], { cwd: repo, env: { TMPDIR: tmp } }) : await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { TMPDIR: tmp } });
      expect(run.exitCode, `${how}: ${run.stderr}`).toBe(0);
      for (const dir of deadOnes) expect(existsSync(dir), `${how}: ${dir}`).toBe(false);
      for (const dir of liveOnes) expect(existsSync(dir), `${how}: ${dir}`).toBe(true);
      expect(existsSync(worktreeNamedIndex), how).toBe(true);
      expect(existsSync(lock), how).toBe(false);
      if (how === 'clean') for (const dir of deadOnes) expect(run.stdout).toContain(`removed ${dir}`);
    }
  });
});

