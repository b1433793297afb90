// Per-command overhead of the bubblewrap sandbox: many short commands (`true`) through the
// one process runner without a sandbox, in the run's one bubblewrap with its supervisor
// (the default), and in a bubblewrap of their own (`sandbox.per_command`), in alternation
// so all three see the same machine. Run through `npm run bench` (which builds first);
// returns figures for the table.
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

    const home = os.homedir();
    const sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir, network: false, home });
    const perCommand = await createSandbox({ mode: 'bwrap', worktree, tmpDir, network: false, home, perCommand: true });
    // Without a sandbox as a run has it: its commands go to one supervisor too, where perl works.
    const unconfined = await createSandbox({ mode: 'none', worktree, tmpDir, network: false, home });
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: tmpDir };
    const once = async (inSandbox) => {
      const started = performance.now();
      const result = await runCommand({ command: 'true', cwd: worktree, env, timeoutMs: 30_000, outputCap: 30_000, ...(inSandbox ? { sandbox: inSandbox } : {}) });
      if (result.exitCode !== 0) throw new Error(`\`true\` failed${inSandbox ? ' in the sandbox' : ''}: ${result.output}`);
      return performance.now() - started;
    };
    try {
      // The supervisor's own start (one bubblewrap, once a run) is in the warm-up, as it is in a run's first command.
      for (let i = 0; i < WARMUP; i++) {
        await once(unconfined);
        await once(sandbox);
        await once(perCommand);
      }
      const none = [];
      const supervised = [];
      const ownBwrap = [];
      for (let i = 0; i < COMMANDS; i++) {
        none.push(await once(unconfined));
        supervised.push(await once(sandbox));
        ownBwrap.push(await once(perCommand));
      }
      const overheads = none.map((t, i) => supervised[i] - t);
      const perCommandOverheads = none.map((t, i) => ownBwrap[i] - t);
      return {
        measured: true,
        commands: COMMANDS,
        bwrap: probe.bwrap,
        supervised: sandbox.supervised,
        noneMedianMs: median(none),
        bwrapMedianMs: median(supervised),
        overheadMedianMs: median(overheads),
        overheadP90Ms: quantile(overheads, 0.9),
        perCommandMedianMs: median(ownBwrap),
        perCommandOverheadMedianMs: median(perCommandOverheads),
        perCommandOverheadP90Ms: quantile(perCommandOverheads, 0.9),
      };
    } finally {
      await Promise.all([sandbox.close(), perCommand.close(), unconfined.close()]);
    }
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
