// Per-command overhead of the bubblewrap sandbox: many short commands (`true`) through the
// one process runner, with the sandbox and without, in alternation so both see the same
// machine. Run through `npm run bench` (which builds first); returns figures for the table.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSandbox } from '../dist/guard/sandbox/sandbox.js';
import { probeBubblewrap } from '../dist/guard/sandbox/probe.js';
import { runCommand } from '../dist/proc/run-command.js';

const COMMANDS = 100;
const WARMUP = 5;

export async function benchSandbox() {
  const probe = await probeBubblewrap();
  if (!probe.ok) return { measured: false, reason: probe.reason };
  const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'corral-bench-sandbox-')));
  try {
    // A real linked worktree, so the sandbox binds its git metadata as in a run.
    const repo = path.join(scratch, 'repo');
    const worktree = path.join(scratch, 'worktree');
    const tmpDir = mkdtempSync(path.join(scratch, 'tmp-'));
    const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], { stdio: 'ignore' });
    git('init', '-q', repo);
    writeFileSync(path.join(repo, 'a.txt'), 'a\n');
    git('-C', repo, 'add', '-A');
    git('-C', repo, 'commit', '-qm', 'bench');
    git('-C', repo, 'worktree', 'add', '--detach', '-q', worktree, 'HEAD');

    const sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir, network: false, home: os.homedir() });
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.homedir(), TMPDIR: tmpDir };
    const once = async (withSandbox) => {
      const started = performance.now();
      const result = await runCommand({ command: 'true', cwd: worktree, env, timeoutMs: 30_000, outputCap: 30_000, ...(withSandbox ? { sandbox } : {}) });
      if (result.exitCode !== 0) throw new Error(`\`true\` failed${withSandbox ? ' in the sandbox' : ''}: ${result.output}`);
      return performance.now() - started;
    };
    for (let i = 0; i < WARMUP; i++) {
      await once(false);
      await once(true);
    }
    const none = [];
    const bwrap = [];
    for (let i = 0; i < COMMANDS; i++) {
      none.push(await once(false));
      bwrap.push(await once(true));
    }
    const overheads = none.map((t, i) => bwrap[i] - t);
    return {
      measured: true,
      commands: COMMANDS,
      bwrap: probe.bwrap,
      noneMedianMs: median(none),
      bwrapMedianMs: median(bwrap),
      overheadMedianMs: median(overheads),
      overheadP90Ms: quantile(overheads, 0.9),
    };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function median(values) {
  return quantile(values, 0.5);
}

function quantile(values, q) {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2));
}
