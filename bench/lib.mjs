// Helpers shared by the whole-process benchmarks: run a command as its own process and
// time it (wall clock, peak RSS), summarise repeated runs, and make throwaway repositories.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const CORRAL = path.join(ROOT, 'bin/corral.cjs');

/**
 * Now on the machine's monotonic clock, in ms (sub-millisecond): the clock every process
 * here reads alike, so a time a server process stamps compares with one taken here.
 * performance.timeOrigin + now() does not: each process derives its origin from the wall
 * clock when it starts, and two processes' origins differ by a few ms on a busy machine.
 */
export const sharedClockMs = () => Number(process.hrtime.bigint()) / 1e6;

/** A V8 flag line of bin/corral.cjs; the flag is the first group. */
const CLI_FLAG_LINE = /^v8\.setFlagsFromString\('([^']+)'\);\n/gm;

/** The V8 flags bin/corral.cjs sets, read from it, in its order: each call's string, which may hold two flags. */
export function cliV8Flags(entry = readFileSync(CORRAL, 'utf8')) {
  const flags = [...entry.matchAll(CLI_FLAG_LINE)].map((match) => match[1]);
  if (flags.length === 0) throw new Error('bench: bin/corral.cjs sets no V8 flag the way the bench reads them; update bench/lib.mjs');
  return flags;
}

/** GNU time reports a process's peak RSS (ru_maxrss, children included) with `-f %M`. */
const GNU_TIME = ['/usr/bin/time', '/bin/time'].find((file) => existsSync(file));

/** Whether peak memory can be measured here; without GNU time the memory rows say n/a. */
export const canMeasureMemory = GNU_TIME !== undefined;

/**
 * Runs `argv` to its end as a separate process and returns its wall time (spawn to exit,
 * seen from here) and peak resident memory. Every subject and every baseline goes through
 * this same path, so what it costs itself cancels out of each comparison.
 */
export function measure(argv, { cwd = ROOT, env = cleanEnv(), check = true } = {}) {
  const rssFile = path.join(os.tmpdir(), `corral-bench-rss-${process.pid}`);
  const [file, ...args] = GNU_TIME ? [GNU_TIME, '-f', '%M', '-o', rssFile, ...argv] : argv;
  const startedAt = Date.now();
  const started = performance.now();
  const startAt = sharedClockMs();
  const result = spawnSync(file, args, { cwd, env, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - started;
  if (check && result.status !== 0) {
    throw new Error(`${argv.join(' ')} exited ${result.status}${result.signal ? ` (${result.signal})` : ''}:\n${result.stderr.slice(-2000)}`);
  }
  let rssKb = null;
  if (GNU_TIME) {
    // The last line: GNU time puts "Command exited with non-zero status" lines before it.
    rssKb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').at(-1));
    rmSync(rssFile, { force: true });
  }
  // startAt: the spawn on the clock a server in another process stamps too (sharedClockMs).
  return { ms, rssMb: rssKb === null ? null : rssKb / 1024, startedAt, startAt, status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Median and spread of a list of numbers. */
export function summarise(values) {
  const sorted = values.filter((v) => v !== null && Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return null;
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  const mid = sorted.length / 2;
  const median = sorted.length % 2 === 1 ? sorted[Math.floor(mid)] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median: round(median), min: round(sorted[0]), max: round(sorted.at(-1)), p25: round(at(0.25)), p75: round(at(0.75)), n: sorted.length };
}

export function round(value, digits = 2) {
  return Number(value.toFixed(digits));
}

/** Least-squares slope and intercept of y over x. */
export function fitLine(points) {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { slope, intercept: my - slope * mx };
}

/** A fresh temp directory (real path: corral compares real paths); `dispose()` removes it. */
export function tempDir(label) {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), `corral-bench-${label}-`)));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

/** git with a fixed identity and no user or system config, like a clean CI machine. */
export function git(cwd, ...args) {
  return execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: gitEnv(),
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

export function gitEnv() {
  return { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
}

/**
 * A repository with one commit: `files` small text files spread over folders of 100,
 * plus whatever `extra` maps (relative path → content). Returns its top directory.
 */
export function makeRepo(dir, { files = 1, extra = {} } = {}) {
  git(os.tmpdir(), 'init', '-q', dir);
  for (let i = 0; i < files; i++) {
    const folder = path.join(dir, 'src', `d${String(Math.floor(i / 100)).padStart(3, '0')}`);
    if (i % 100 === 0) execFileSync('mkdir', ['-p', folder]);
    writeFileSync(path.join(folder, `f${i}.txt`), `file ${i}\n${'x'.repeat(64)}\n`);
  }
  for (const [name, content] of Object.entries(extra)) {
    execFileSync('mkdir', ['-p', path.dirname(path.join(dir, name))]);
    writeFileSync(path.join(dir, name), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'bench repository');
  return dir;
}

/** A replay script of `steps` turns of one Bash call each, then a closing turn without tools. */
export function bashReplayScript(steps, command) {
  const lines = ['turns:'];
  const call = `  - tools:\n      - Bash: {command: ${JSON.stringify(command)}}`;
  for (let i = 0; i < steps; i++) lines.push(call);
  lines.push('  - text: Done.');
  return `${lines.join('\n')}\n`;
}

/** A ticket that may change nothing, runs without a sandbox and has budget for `steps`. */
export function benchTicket(script, steps) {
  return [
    'task: corral benchmark; the replay script does the work.',
    'allow: ["**"]',
    'allow_empty: true',
    'sandbox: none',
    `budget: {steps: ${steps + 10}, tokens: 1000000000000, minutes: 120}`,
    `model: replay:${script}`,
    '',
  ].join('\n');
}

/**
 * The caller's environment minus what changes how every node process starts: a CA bundle
 * in NODE_EXTRA_CA_CERTS is read at each start (here it made `node -e 0` 90 ms instead of
 * 50), and NODE_OPTIONS can load anything. Every subject and every baseline runs with it,
 * so a ratio compares the same starts.
 */
export function cleanEnv() {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

/** The environment corral runs with here: a clean one, minus anything that would reach a real model or a terminal. */
export function corralEnv() {
  const env = { ...cleanEnv(), NO_COLOR: '1', CI: 'true' };
  delete env.ANTHROPIC_API_KEY;
  delete env.ANTHROPIC_BASE_URL;
  delete env.FORCE_COLOR;
  return env;
}

/** `corral run` on one ticket, unattended, with run records kept out of the repository. */
export function corralRun(ticket, { repo, runsDir }) {
  return measure([process.execPath, CORRAL, 'run', '--unattended', '--runs-dir', runsDir, ticket], { cwd: repo, env: corralEnv() });
}

/**
 * Throws unless the one run in `runsDir` ran `calls` Bash calls to the end. A call the
 * guard turned away costs no spawn, so a run whose calls were refused (a rule, a changed
 * input, a default that asks) would pass for a fast one; its trace says which it was.
 */
export function expectCallsRan(runsDir, calls) {
  const events = traceOf(runsDir);
  const results = events.filter((event) => event.type === 'tool_result' && event.tool === 'Bash');
  const ran = results.filter((event) => event.isError === false).length;
  if (ran !== calls) {
    const refused = events.find((event) => event.type === 'decision' && event.effect !== 'allow');
    throw new Error(`the run in ${runsDir} ran ${ran} of its ${calls} Bash calls${refused ? `; the guard answered ${refused.effect} (${refused.rule}: ${refused.reason})` : ''}`);
  }
}

/** The events of the one run in `runsDir`, from its trace. */
function traceOf(runsDir) {
  const runs = readdirSync(runsDir);
  if (runs.length !== 1) throw new Error(`${runsDir} holds ${runs.length} runs, not one`);
  return readFileSync(path.join(runsDir, runs[0], 'trace.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
}

/** How many values of a run's `count` are left out at each end as its start and end: a tenth. */
function tenthOf(count) {
  return Math.ceil(count / 10);
}

/** The mean of a run's per-step values over its middle, a tenth left out at each end. */
export function middleMean(values) {
  const tenth = tenthOf(values.length);
  const middle = values.slice(tenth, values.length - tenth);
  return middle.reduce((sum, value) => sum + value, 0) / middle.length;
}

/**
 * Where a step of the run in `runsDir` went, from its trace's times: the mean, over the
 * steps of its middle (the first tenth and the last left out: the workspace, the parser's
 * and the supervisor's start, the end), of `model` (the request line to the response line:
 * the client's request, the model's answer, reading its stream), `guard` (the response to
 * the decision: the call's trace line, the guard), `command` (the decision to the result:
 * the command, handed over and back), and `rest` (the result to the next request line).
 * The trace's times are in milliseconds; the mean of many steps is finer than that.
 */
export function stepPartsOf(runsDir) {
  const marks = ['model_request', 'model_response', 'decision', 'tool_result'];
  const at = new Map();
  for (const event of traceOf(runsDir)) {
    if (!marks.includes(event.type)) continue;
    const key = `${event.step} ${event.type}`;
    if (!at.has(key)) at.set(key, Date.parse(event.time));
  }
  const steps = Math.max(0, ...[...at.keys()].filter((key) => key.endsWith(' tool_result')).map((key) => Number(key.split(' ')[0])));
  const tenth = tenthOf(steps);
  const sums = { model: 0, guard: 0, command: 0, rest: 0 };
  let counted = 0;
  for (let step = tenth + 1; step <= steps - tenth; step++) {
    const times = marks.map((type) => at.get(`${step} ${type}`));
    const next = at.get(`${step + 1} model_request`);
    if (times.some((time) => time === undefined) || next === undefined) continue;
    const [request, response, decision, result] = times;
    sums.model += response - request;
    sums.guard += decision - response;
    sums.command += result - decision;
    sums.rest += next - result;
    counted += 1;
  }
  if (counted === 0) throw new Error(`the run in ${runsDir} has no whole steps in its trace to time`);
  return { steps: counted, ...Object.fromEntries(Object.entries(sums).map(([part, sum]) => [part, sum / counted])) };
}

/**
 * Runs a subject and its baseline in `round`, the baseline first in even rounds and second
 * in odd ones, so neither always follows the other (whatever one leaves behind, a cold
 * cache or a disk busy with a removal, falls on both sides alike).
 */
export function inTurn(round, baseline, subject) {
  if (round % 2 === 0) {
    baseline();
    subject();
  } else {
    subject();
    baseline();
  }
}

/** Runs `fn` `times` times; `fn` gets the round index. */
export function repeat(times, fn) {
  const out = [];
  for (let i = 0; i < times; i++) out.push(fn(i));
  return out;
}
