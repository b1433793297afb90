// Batch throughput: 16 replay tickets through the real CLI at --jobs 1 and --jobs 2, in
// alternation so both see the same machine. Each ticket writes a file, runs one command
// and one check: the harness's own work per ticket (worktree, guard, checks, fence,
// branch), with no model time. Run through `npm run bench` (which builds first).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/corral.js');
const TICKETS = 16;
const JOBS = [1, 2];

/** Returns the figures, and `rows` ([name, value, note]) for the table of bench/run.mjs. */
export async function benchBatch({ quick = false } = {}) {
  const ROUNDS = quick ? 1 : 3;
  const repo = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'corral-bench-batch-')));
  try {
    makeRepo(repo);
    const seconds = Object.fromEntries(JOBS.map((jobs) => [jobs, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const jobs of JOBS) {
        const started = performance.now();
        execFileSync('node', [BIN, 'run', 'tickets', '--jobs', String(jobs), '--json', '--unattended'], { cwd: repo, stdio: 'ignore', env: { ...process.env, CI: 'true' } });
        seconds[jobs].push((performance.now() - started) / 1000);
      }
    }
    const figures = Object.fromEntries(
      JOBS.map((jobs) => {
        const sorted = [...seconds[jobs]].sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)];
        return [`jobs${jobs}`, { medianSeconds: round(median), minSeconds: round(sorted[0]), maxSeconds: round(sorted.at(-1)), ticketsPerMinute: round((TICKETS / median) * 60) }];
      }),
    );
    const speedUp = round(figures.jobs1.medianSeconds / figures.jobs2.medianSeconds);
    const spread = (f) => `${f.medianSeconds} s median (min ${f.minSeconds}, max ${f.maxSeconds}, n ${ROUNDS})`;
    const rows = [
      [`batch of ${TICKETS} replay tickets, --jobs 1`, `${figures.jobs1.ticketsPerMinute}/min`, spread(figures.jobs1)],
      [`batch of ${TICKETS} replay tickets, --jobs 2`, `${figures.jobs2.ticketsPerMinute}/min`, spread(figures.jobs2)],
      ['batch speed-up, --jobs 2 over --jobs 1', `${speedUp}×`, `on ${os.cpus().length} CPUs`],
    ];
    return { rows, tickets: TICKETS, rounds: ROUNDS, ...figures, speedUp };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

function makeRepo(repo) {
  const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  mkdirSync(path.join(repo, 'tickets'));
  mkdirSync(path.join(repo, 'replay'));
  writeFileSync(path.join(repo, 'README.md'), 'batch bench\n');
  for (let i = 1; i <= TICKETS; i++) {
    const id = `t${String(i).padStart(2, '0')}`;
    writeFileSync(path.join(repo, 'replay', `${id}.yaml`), `turns:\n  - tools:\n      - Write: {file_path: out/${id}.txt, content: "${id}\\n"}\n      - Bash: {command: "ls out"}\n  - text: done\n`);
    writeFileSync(path.join(repo, 'tickets', `${id}.yaml`), `id: ${id}\ntask: write out/${id}.txt\nallow: ["out/${id}.txt"]\nsandbox: none\nmodel: replay:../replay/${id}.yaml\nchecks: ["test -f out/${id}.txt"]\n`);
  }
  git('add', '-A');
  git('commit', '-qm', 'bench tickets');
}

function round(n) {
  return Math.round(n * 100) / 100;
}
