// Batch throughput: 16 replay tickets through the real CLI at --jobs 1 and --jobs 2, in
// alternation so both see the same machine. Two kinds of ticket:
//  - harness only: each writes a file, runs `ls` and one check, so all the time is corral's
//    own work per ticket (worktree, guard, checks, fence, branch), mostly spawning git;
//  - with a 1 s wait: the same plus `sleep 1`, standing in for what dominates a real run
//    (waiting on the model and on the project's tests), which parallel tickets overlap.
// Run through `npm run bench` (which builds first).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/corral.cjs');
const TICKETS = 16;
const JOBS = [1, 2];
const KINDS = [
  { key: 'harness', title: 'harness only', command: 'ls out' },
  { key: 'waiting', title: 'with a 1 s wait', command: 'ls out; sleep 1' },
];

/** Returns the figures, and `rows` ([name, value, note]) for the table of bench/run.mjs. */
export async function benchBatch({ quick = false } = {}) {
  const rounds = quick ? 1 : 3;
  const rows = [];
  const figures = {};
  for (const kind of KINDS) {
    const repo = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'corral-bench-batch-')));
    try {
      makeRepo(repo, kind.command);
      const seconds = Object.fromEntries(JOBS.map((jobs) => [jobs, []]));
      for (let round = 0; round < rounds; round++) {
        for (const jobs of JOBS) {
          const started = performance.now();
          execFileSync('node', [BIN, 'run', 'tickets', '--jobs', String(jobs), '--json'], { cwd: repo, stdio: 'ignore', env: { ...process.env, CI: 'true' } });
          seconds[jobs].push((performance.now() - started) / 1000);
        }
      }
      const byJobs = Object.fromEntries(JOBS.map((jobs) => [`jobs${jobs}`, summarise(seconds[jobs])]));
      const speedUp = round2(byJobs.jobs1.medianSeconds / byJobs.jobs2.medianSeconds);
      figures[kind.key] = { ...byJobs, speedUp };
      for (const jobs of JOBS) {
        const f = byJobs[`jobs${jobs}`];
        rows.push([`batch, ${TICKETS} tickets ${kind.title}, --jobs ${jobs}`, `${f.ticketsPerMinute}/min`, `${f.medianSeconds} s median (min ${f.minSeconds}, max ${f.maxSeconds}, n ${rounds})`]);
      }
      rows.push([`batch, ${kind.title}: speed-up at --jobs 2`, `${speedUp}×`, `on ${os.cpus().length} CPUs`]);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  }
  return { rows, tickets: TICKETS, rounds, ...figures };
}

function summarise(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return { medianSeconds: round2(median), minSeconds: round2(sorted[0]), maxSeconds: round2(sorted.at(-1)), ticketsPerMinute: round2((TICKETS / median) * 60) };
}

function makeRepo(repo, command) {
  const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  mkdirSync(path.join(repo, 'tickets'));
  mkdirSync(path.join(repo, 'replay'));
  writeFileSync(path.join(repo, 'README.md'), 'batch bench\n');
  for (let i = 1; i <= TICKETS; i++) {
    const id = `t${String(i).padStart(2, '0')}`;
    writeFileSync(path.join(repo, 'replay', `${id}.yaml`), `turns:\n  - tools:\n      - Write: {file_path: out/${id}.txt, content: "${id}\\n"}\n      - Bash: {command: ${JSON.stringify(command)}}\n  - text: done\n`);
    writeFileSync(path.join(repo, 'tickets', `${id}.yaml`), `id: ${id}\ntask: write out/${id}.txt\nallow: ["out/${id}.txt"]\nsandbox: none\nmodel: replay:../replay/${id}.yaml\nchecks: ["test -f out/${id}.txt"]\n`);
  }
  git('add', '-A');
  git('commit', '-qm', 'bench tickets');
}

function round2(n) {
  return Math.round(n * 100) / 100;
}
