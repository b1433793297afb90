// Guard throughput and latency over the test corpus, and the shell parser's load time.
// Run through `npm run bench` (which builds first); prints a table and returns figures.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { judgeCall } from '../dist/run/call-pipeline.js';
import { dryRunGuard } from '../dist/run/dry-run.js';
import { expectationFor, meetsExpectation } from '../dist/run/policy-test.js';
import { cliV8Flags } from './lib.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CORPUS = path.join(ROOT, 'test/guard/corpus');
const ROUNDS = 5;
const LOADS = 7;
// Under the V8 flags the CLI sets (bin/corral.cjs: the shell parser's WASM and JavaScript on
// V8's baseline tiers), as every figure here is, the fresh processes of the parser's load
// included (there on the command line: one string of the CLI's may hold two flags).
const CLI_V8_FLAGS = cliV8Flags();
v8.setFlagsFromString(CLI_V8_FLAGS.join(' '));

export async function benchGuard() {
  const repo = makeCorpusRepo();
  try {
    const files = readdirSync(CORPUS).filter((name) => /^(dangerous|benign).*\.yaml$/.test(name));
    const cases = files.flatMap((file) => parse(readFileSync(path.join(CORPUS, file), 'utf8')).cases);
    const guards = new Map();
    for (const ticket of new Set(cases.map((c) => c.ticket ?? 'ticket.yaml'))) {
      guards.set(ticket, await dryRunGuard(path.join(repo, ticket), repo, process.env));
    }
    // Each call the way a run's pipeline judges it: validated against its tool's schema,
    // then decided from its tool's kind and locations.
    const judge = (c) => judgeCall(guards.get(c.ticket ?? 'ticket.yaml'), c.tool, c.args, c.cwd);
    // One pass to load the parser and warm the JIT; it is not counted. It also checks that
    // the guard decides each case as the corpus expects: a figure from calls the guard
    // turned away unread (a changed signature, a tool it no longer knows) measures nothing.
    const wrong = [];
    for (const c of cases) {
      const { verdict } = await judge(c);
      if (!meetsExpectation(verdict, expectationFor(c, guards.get(c.ticket ?? 'ticket.yaml').sandbox))) wrong.push(`${c.id}: ${verdict.decision.effect} (${verdict.decision.rule})`);
    }
    if (wrong.length > 0) throw new Error(`the guard bench decided ${wrong.length} corpus cases otherwise than \`corral policy test\` expects, first ${wrong.slice(0, 3).join('; ')}`);
    const latencies = [];
    const started = performance.now();
    for (let round = 0; round < ROUNDS; round++) {
      for (const c of cases) {
        const t = performance.now();
        await judge(c);
        latencies.push(performance.now() - t);
      }
    }
    const elapsed = performance.now() - started;
    latencies.sort((a, b) => a - b);
    return {
      cases: cases.length,
      decisions: latencies.length,
      decisionsPerSecond: Math.round(latencies.length / (elapsed / 1000)),
      medianMs: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
      maxMs: latencies[latencies.length - 1],
      parserLoadMs: parserLoadTimes(),
    };
  } finally {
    rmSync(repo, { recursive: true, force: true });
  }
}

/** Loading the WASM grammar in a fresh process, each time: median and spread. */
function parserLoadTimes() {
  const script = `const t = performance.now(); const m = await import(${JSON.stringify(path.join(ROOT, 'dist/guard/shell/parser.js'))}); await m.loadBashParser(); console.log(performance.now() - t);`;
  const times = [];
  for (let i = 0; i < LOADS; i++) times.push(Number(execFileSync(process.execPath, [...CLI_V8_FLAGS.flatMap((flags) => flags.split(' ')), '--input-type=module', '-e', script], { encoding: 'utf8' })));
  times.sort((a, b) => a - b);
  return { median: quantile(times, 0.5), min: times[0], max: times[times.length - 1] };
}

function quantile(sorted, q) {
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(3));
}

/** The corpus repository of test/guard/corpus/repo.yaml, in a temp dir. */
function makeCorpusRepo() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'corral-bench-guard-'));
  const spec = parse(readFileSync(path.join(CORPUS, 'repo.yaml'), 'utf8'));
  for (const [name, content] of Object.entries(spec.files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  for (const [name, target] of Object.entries(spec.symlinks)) symlinkSync(target, path.join(dir, name));
  for (const name of readdirSync(CORPUS)) if (name.endsWith('.yaml') && name !== 'repo.yaml') copyFileSync(path.join(CORPUS, name), path.join(dir, name));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@localhost', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-q', '-m', 'corpus');
  return dir;
}
