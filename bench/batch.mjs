// Batch throughput, the target of issue 26: `corral run tickets --jobs 2` on 16
// harness-bound tickets is at least 1.6 × as fast as `--jobs 1`. Harness-bound: replay
// tickets that write a file and run a few `Bash: true` steps and one check, no sleep, so
// all the time is corral's own per-ticket work (worktree, guard, checks, fence, branch,
// and the processes all that starts). Both --jobs values run in the same rounds, the
// order alternating, so both see the same machine. One more run, untimed, counts the git
// processes a ticket starts (a `git` on PATH that logs each call).
// Run through `npm run bench` (which builds first).
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { corralEnv, summarise } from './lib.mjs';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../bin/corral.cjs');
const TICKETS = 16;
const BASH_STEPS = 4;
const TARGET_SPEED_UP = 1.6;

/** Returns the figures, and `rows` ([name, value, note]) for the table of bench/run.mjs. */
export async function benchBatch({ quick = false } = {}) {
  const rounds = quick ? 3 : 5;
  const rows = [];
  const repo = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'corral-bench-batch-')));
  try {
    makeRepo(repo);
    const seconds = { 1: [], 2: [] };
    const busy = { 1: [], 2: [] };
    const paired = [];
    const capacities = [];
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? [1, 2] : [2, 1];
      const took = {};
      for (const jobs of order) {
        const batch = runBatch(repo, jobs);
        took[jobs] = batch.seconds;
        if (batch.busyCpus !== null) busy[jobs].push(batch.busyCpus);
      }
      seconds[1].push(took[1]);
      seconds[2].push(took[2]);
      paired.push(took[1] / took[2]);
      capacities.push(await parallelCapacity());
    }
    const jobs1 = batchTimes(seconds[1]);
    const jobs2 = batchTimes(seconds[2]);
    const speedUp = round2(jobs1.medianSeconds / jobs2.medianSeconds);
    const pairedSpeedUp = summarise(paired);
    const met = speedUp >= TARGET_SPEED_UP;
    const gitPerTicket = countGitPerTicket(repo);
    // What the machine allows: CPU-bound work that takes one CPU alone, run twice at once,
    // is `capacity` times as fast as run twice in a row (2 on two free cores; less where
    // the two vCPUs share a core or a host). A batch that keeps `busy` CPUs busy at
    // --jobs 1 can then be at most capacity / busy times as fast at --jobs 2.
    const capacity = summarise(capacities).median;
    const busy1 = summarise(busy[1])?.median ?? null;
    const busy2 = summarise(busy[2])?.median ?? null;
    const ceiling = busy1 === null ? null : round2(Math.min(2, capacity / busy1));
    rows.push(
      [`batch, ${TICKETS} harness-bound tickets, --jobs 1`, `${jobs1.medianSeconds} s`, `${jobs1.ticketsPerMinute}/min (min ${jobs1.minSeconds}, max ${jobs1.maxSeconds}, n ${rounds})`],
      [`batch, ${TICKETS} harness-bound tickets, --jobs 2`, `${jobs2.medianSeconds} s`, `${jobs2.ticketsPerMinute}/min (min ${jobs2.minSeconds}, max ${jobs2.maxSeconds}, n ${rounds})`],
      ['batch: --jobs 2 speed-up over --jobs 1', `${speedUp}×`, `target ≥ ${TARGET_SPEED_UP}×: ${met ? 'met' : 'MISSED'}; per round ${pairedSpeedUp.median} (${pairedSpeedUp.min}–${pairedSpeedUp.max}); ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}`],
      ['batch: git processes per ticket', `${gitPerTicket}`, `--jobs 1, ${TICKETS} tickets, counted by a logging git on PATH`],
      ['machine: two CPU-bound processes at once / one after the other', `${round2(capacity)}×`, `per round ${capacities.map(round2).join(', ')}; 2 on two free cores`],
      ...(busy1 === null
        ? []
        : [
            ['batch: CPUs busy (whole machine, /proc/stat)', `${round2(busy1)} / ${round2(busy2)}`, '--jobs 1 / --jobs 2, median; corral and every process it starts'],
            ['batch: --jobs 2 ceiling on this machine', `${ceiling}×`, 'the line above over CPUs busy at --jobs 1: what two tickets at once can gain here'],
          ]),
    );
    return { rows, tickets: TICKETS, rounds, jobs1, jobs2, speedUp, pairedSpeedUp, target: { min: TARGET_SPEED_UP, met }, gitPerTicket, capacity: round2(capacity), busyCpus: { jobs1: busy1, jobs2: busy2 }, ceiling };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/**
 * Seconds one batch took, and how many CPUs of the machine were busy meanwhile (null
 * without /proc/stat); the run records of earlier batches are removed first so every
 * batch starts alike. The environment is a user's shell, as for every bench subject.
 */
function runBatch(repo, jobs, env = {}) {
  rmSync(path.join(repo, '.corral'), { recursive: true, force: true });
  const before = cpuTimes();
  const started = performance.now();
  execFileSync(process.execPath, [BIN, 'run', 'tickets', '--jobs', String(jobs), '--json'], { cwd: repo, stdio: 'ignore', env: { ...corralEnv(), ...env } });
  const seconds = (performance.now() - started) / 1000;
  const after = cpuTimes();
  const busyCpus = before && after ? ((after.busy - before.busy) / (after.busy + after.idle - before.busy - before.idle)) * cpuCount() : null;
  return { seconds, busyCpus: busyCpus === null ? null : round2(busyCpus) };
}

/** The machine's CPU time so far (jiffies): busy (user, nice, system, irq, softirq, steal) and idle (idle, iowait); null off Linux. */
function cpuTimes() {
  try {
    const [user, nice, system, idle, iowait, irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return { busy: user + nice + system + irq + softirq + (steal ?? 0), idle: idle + iowait };
  } catch {
    return null;
  }
}

function cpuCount() {
  return os.availableParallelism?.() ?? os.cpus().length;
}

/** A loop of about a second of one CPU, as its own process. */
function burn() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', 'let x = 0; for (let i = 0; i < 2e8; i++) x += i; if (x < 0) console.log(x)'], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('exit', resolve);
  });
}

/** Two CPU-bound processes one after the other, then both at once: the first time over the second. */
async function parallelCapacity() {
  let started = performance.now();
  await burn();
  await burn();
  const serial = performance.now() - started;
  started = performance.now();
  await Promise.all([burn(), burn()]);
  return serial / (performance.now() - started);
}

/** git processes per ticket in one `--jobs 1` batch: a `git` first on PATH writes a line per call, then runs the real one. */
function countGitPerTicket(repo) {
  const bin = mkdtempSync(path.join(os.tmpdir(), 'corral-bench-git-'));
  try {
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const log = path.join(bin, 'calls');
    writeFileSync(path.join(bin, 'git'), `#!/bin/sh\necho x >> '${log}'\nexec '${realGit}' "$@"\n`);
    chmodSync(path.join(bin, 'git'), 0o755);
    writeFileSync(log, '');
    runBatch(repo, 1, { PATH: `${bin}:${process.env.PATH ?? ''}` });
    return round2(readFileSync(log, 'utf8').split('\n').filter(Boolean).length / TICKETS);
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
}

/** A batch's times in seconds, summarised, and the tickets a minute at the median. */
function batchTimes(values) {
  const { median, min, max } = summarise(values);
  return { medianSeconds: median, minSeconds: min, maxSeconds: max, ticketsPerMinute: round2((TICKETS / median) * 60) };
}

function makeRepo(repo) {
  const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], { cwd: repo, stdio: 'ignore' });
  git('init', '-q');
  mkdirSync(path.join(repo, 'tickets'));
  mkdirSync(path.join(repo, 'replay'));
  writeFileSync(path.join(repo, 'README.md'), 'batch bench\n');
  const bashTurns = Array.from({ length: BASH_STEPS }, () => '  - tools:\n      - Bash: {command: "true"}\n').join('');
  for (let i = 1; i <= TICKETS; i++) {
    const id = `t${String(i).padStart(2, '0')}`;
    writeFileSync(path.join(repo, 'replay', `${id}.yaml`), `turns:\n  - tools:\n      - Write: {file_path: out/${id}.txt, content: "${id}\\n"}\n${bashTurns}  - text: done\n`);
    writeFileSync(path.join(repo, 'tickets', `${id}.yaml`), `id: ${id}\ntask: write out/${id}.txt\nallow: ["out/${id}.txt"]\nsandbox: none\nmodel: replay:../replay/${id}.yaml\nchecks: ["test -f out/${id}.txt"]\n`);
  }
  git('add', '-A');
  git('commit', '-qm', 'bench tickets');
}

function round2(n) {
  return Math.round(n * 100) / 100;
}
