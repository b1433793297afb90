// Worktree cost on a generated repository of 20,000 files: a no-op replay ticket (corral
// makes the worktree, runs nothing, checks the fence, keeps the result, removes the
// worktree) against `git worktree add` plus `git worktree remove` alone, in the same rounds.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchTicket, corralRun, gitEnv, inTurn, makeRepo, measure, round, summarise, tempDir } from './lib.mjs';

export async function benchWorktree({ files = 20_000, rounds = 5 } = {}) {
  const scratch = tempDir('worktree');
  try {
    const generated = performance.now();
    const repo = makeRepo(path.join(scratch.dir, 'repo'), {
      files,
      extra: { 'noop.replay.yaml': 'turns:\n  - text: Nothing to do.\n', 'noop.ticket.yaml': benchTicket('noop.replay.yaml', 0) },
    });
    const generateMs = performance.now() - generated;
    const ticket = path.join(repo, 'noop.ticket.yaml');
    const bare = () => {
      // Where corral puts its worktrees (the system temp dir, an empty folder git fills):
      // a checkout next to the repository cost several times the system time here.
      const dir = mkdtempSync(path.join(os.tmpdir(), 'corral-bench-bare-'));
      const add = measure(['git', 'worktree', 'add', '--detach', '--quiet', dir, 'HEAD'], { cwd: repo, env: gitEnv() });
      const remove = measure(['git', 'worktree', 'remove', '--force', dir], { cwd: repo, env: gitEnv() });
      return { ms: add.ms + remove.ms, addMs: add.ms, removeMs: remove.ms };
    };
    bare(); // Warm the file cache for both.
    const run = [];
    const base = [];
    for (let i = 0; i < rounds; i++) {
      // Right after the other side's removal of 20,000 files, a checkout here was measured
      // up to 3× slower (docs/performance.md).
      inTurn(
        i,
        () => base.push(bare()),
        () => run.push(corralRun(ticket, { repo, runsDir: path.join(scratch.dir, 'runs', String(i)) })),
      );
    }
    const runMs = summarise(run.map((r) => r.ms));
    const bareMs = summarise(base.map((r) => r.ms));
    return {
      files,
      rounds,
      generateMs: round(generateMs, 0),
      runMs,
      bareMs,
      bareAddMs: summarise(base.map((r) => r.addMs)),
      bareRemoveMs: summarise(base.map((r) => r.removeMs)),
      ratio: round(runMs.median / bareMs.median),
      peakRssMb: summarise(run.map((r) => r.rssMb)),
    };
  } finally {
    scratch.dispose();
  }
}
