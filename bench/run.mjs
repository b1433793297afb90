// `npm run bench`: corral's speed figures, printed as a table and kept in bench/results.json.
// Not part of `npm test`: timings belong here, never in tests that must not flake.
//
//   node bench/run.mjs [--quick] [--only=cold,steps,sdk,worktree,guard,sandbox,batch,tricks]
//
// Each section runs whole processes (bin/corral.cjs on the built dist/) beside a baseline
// measured in the same rounds, and reports medians with their spread. docs/performance.md
// says how each figure is measured and what the targets are.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { canMeasureMemory } from './lib.mjs';
import { SDK_TARGETS } from './sdk.mjs';

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results.json');
const SECTIONS = ['cold', 'steps', 'sdk', 'worktree', 'guard', 'sandbox', 'batch', 'tricks'];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.find((a) => a.startsWith('--only='))?.slice('--only='.length).split(',') ?? SECTIONS;
const unknown = only.filter((name) => !SECTIONS.includes(name));
if (unknown.length > 0) {
  console.error(`bench: unknown section ${unknown.join(', ')}; sections: ${SECTIONS.join(', ')}`);
  process.exit(64);
}

/** The targets of docs/performance.md, each checked against this run's figures. */
const TARGETS = {
  overheadPerStepMs: { max: 5, what: 'per-step overhead (200 Bash steps)' },
  firstModelCallRatio: { max: 2, what: 'cold start to first model call / node -e 0' },
  peakRssMb: { max: 100, what: 'peak memory, 200 steps of `true`' },
  megabytePeakRssMb: { max: 100, what: 'peak memory, 200 steps of 1 MB output' },
  worktreeRatio: { max: 1.3, what: 'no-op ticket / git worktree add + remove (20,000 files)' },
  ...SDK_TARGETS,
};

let results = {};
try {
  results = JSON.parse(readFileSync(RESULTS, 'utf8'));
} catch {
  // First run: start a new file.
}
results.machine = machine();
results.command = `node bench/run.mjs ${args.join(' ')}`.trim();
const rows = [];
const ms = (s) => `${s.median.toFixed(1)} ms`;
const spread = (s) => `min ${s.min.toFixed(1)}, max ${s.max.toFixed(1)}, n ${s.n}`;
const mb = (v) => (v === null || v === undefined ? 'n/a' : `${v.toFixed(1)} MB`);
const stamp = (figures) => ({ measuredAt: new Date().toISOString(), quick, ...figures });

async function section(name, title, run) {
  if (!only.includes(name)) return;
  process.stderr.write(`bench: ${title}…\n`);
  const started = performance.now();
  const figures = await run();
  process.stderr.write(`bench: ${title} took ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  return figures;
}

const cold = await section('cold', 'cold start', async () => (await import('./cold-start.mjs')).benchColdStart(quick ? { rounds: 5 } : {}));
if (cold) {
  results.cold = stamp(cold);
  rows.push(
    ['node -e 0 (baseline)', ms(cold.nodeMs), spread(cold.nodeMs)],
    ['corral --version', ms(cold.versionMs), `${cold.versionRatio}× node; ${spread(cold.versionMs)}`],
    ['corral run: start to first model call', ms(cold.firstModelCallMs), `${cold.firstModelCallRatio}× node (target ≤ 2×); ${spread(cold.firstModelCallMs)}`],
    ['corral run: no-op ticket, whole process', ms(cold.noOpRunMs), spread(cold.noOpRunMs)],
    ['Anthropic model: start to first request', ms(cold.firstApiRequestMs), `${(cold.firstApiRequestMs.median / cold.nodeMs.median).toFixed(2)}× node (loads the SDK); ${spread(cold.firstApiRequestMs)}`],
  );
}

const steps = await section('steps', 'per-step overhead and memory', async () => (await import('./steps.mjs')).benchSteps({ quick }));
if (steps) {
  results.steps = stamp(steps);
  for (const s of steps.scale) {
    rows.push(
      [`${s.steps} × Bash true: corral run`, ms(s.runMs), spread(s.runMs)],
      [`${s.steps} × bash -c true from node (baseline)`, ms(s.baselineMs), spread(s.baselineMs)],
      [`${s.steps} steps: overhead per step`, `${s.overheadPerStepMs.toFixed(2)} ms`, `${s.steps === 200 ? 'target ≤ 5 ms; ' : ''}per round ${s.pairedOverheadPerStepMs.median.toFixed(2)} (${s.pairedOverheadPerStepMs.min.toFixed(2)}–${s.pairedOverheadPerStepMs.max.toFixed(2)})`],
      [`${s.steps} steps: peak memory`, mb(s.peakRssMb?.median), `baseline ${mb(s.baselinePeakRssMb?.median)}${s.steps === 200 ? '; target ≤ 100 MB' : ''}`],
    );
  }
  for (const s of steps.megabyte) {
    rows.push([`${s.steps} × 1 MB output: peak memory`, mb(s.peakRssMb?.median), `run ${ms(s.runMs)}${s.steps === 200 ? '; target ≤ 100 MB' : ''}`]);
  }
  rows.push(
    ['overhead slope, 50 → 1,000 steps', `${steps.slope.overheadMsPerStep.toFixed(2)} ms`, `per extra step; fixed part ${steps.slope.fixedOverheadMs} ms`],
    ['memory slope, 50 → 1,000 steps', `${steps.slope.peakRssKbPerStep} KB`, `per extra step${steps.slope.megabytePeakRssKbPerStep === undefined ? '' : `; with 1 MB output ${steps.slope.megabytePeakRssKbPerStep} KB`}`],
  );
}

// The path users run: the Anthropic SDK streaming from a local stand-in (bench/sdk.mjs).
const sdk = await section('sdk', 'SDK path', async () => (await import('./sdk.mjs')).benchSdk({ quick }));
if (sdk) {
  results.sdk = stamp(sdk);
  for (const sandbox of ['none', 'bwrap']) {
    for (const s of Object.values(sdk.perStep[sandbox])) {
      const label = `SDK, ${sandbox === 'none' ? 'no sandbox' : 'bubblewrap'}, ${s.steps} × Bash true`;
      rows.push(
        [`${label}: corral run`, ms(s.runMs), spread(s.runMs)],
        [`${label}: bash -c true baseline`, ms(s.baselineMs), spread(s.baselineMs)],
        [`${label}: overhead per step`, `${s.overheadPerStepMs.toFixed(2)} ms`, `per round ${s.pairedOverheadPerStepMs.median.toFixed(2)} (${s.pairedOverheadPerStepMs.min.toFixed(2)}–${s.pairedOverheadPerStepMs.max.toFixed(2)}); reply-to-request gap ${s.gapMs.median.toFixed(1)} ms, last tenth ${s.lastTenthGapMs.median.toFixed(1)} ms`],
        [`${label}: a step`, `${(s.partsMs.model + s.partsMs.guard + s.partsMs.command + s.partsMs.rest).toFixed(2)} ms`, `model request ${s.partsMs.model.toFixed(2)} (the stand-in's own ${s.partsMs.standin.toFixed(2)}), guard ${s.partsMs.guard.toFixed(2)}, command ${s.partsMs.command.toFixed(2)} (the baseline's spawn ${s.partsMs.spawn.toFixed(2)}), the rest ${s.partsMs.rest.toFixed(2)}; the middle of each run, from its trace`],
        [`${label}: fixed part`, ms({ median: s.fixedMs.start.median + s.fixedMs.firstStep.median + s.fixedMs.tail.median }), `start ${ms(s.fixedMs.start)}, first step ${ms(s.fixedMs.firstStep)}, last reply to exit ${ms(s.fixedMs.tail)} (medians); node -e 0 is in the baseline`],
        [`${label}: peak memory`, mb(s.peakRssMb?.median), `baseline ${mb(s.baselinePeakRssMb?.median)}; last request ${s.lastRequestKb} KiB`],
        ...(s.bareBwrapMs ? [[`${label}: bare bwrap … true`, ms(s.bareBwrapMs), `${s.bareBwrapPerSpawnMs.toFixed(2)} ms a spawn over bash -c true`]] : []),
      );
    }
  }
  const { megabyte: m, firstRequest: f } = sdk;
  rows.push(
    [`SDK, ${m.steps} × 1 MiB output: peak memory`, mb(m.peakRssMb?.median), `run ${ms(m.runMs)}; last request ${m.lastRequestKb} KiB`],
    ['SDK: node -e 0 (baseline)', ms(f.nodeMs), spread(f.nodeMs)],
    ['SDK: start to first request', ms(f.firstRequestMs), `${sdk.figures.sdkFirstRequestRatio}× node; ${spread(f.firstRequestMs)}`],
    ['SDK: the model client alone (a floor)', ms(f.clientFloorMs), `${f.clientFloorRatio}× node: node starting, loading the model client with the SDK and sending a fixed first request; no ticket, config or git (bench/client-floor.cjs); ${spread(f.clientFloorMs)}`],
    ['SDK: of which loading the code (a floor)', ms(f.loadFloorMs), `${f.loadFloorRatio}× node: node starting and loading the chunks a first request needs, nothing run (bench/load-floor.cjs); ${spread(f.loadFloorMs)}`],
  );
}

const worktree = await section('worktree', 'worktree cost', async () => (await import('./worktree.mjs')).benchWorktree(quick ? { rounds: 2 } : {}));
if (worktree) {
  results.worktree = stamp(worktree);
  rows.push(
    [`git worktree add + remove, ${worktree.files} files`, ms(worktree.bareMs), `add ${ms(worktree.bareAddMs)}, remove ${ms(worktree.bareRemoveMs)}; ${spread(worktree.bareMs)}`],
    ['corral run: no-op ticket on it', ms(worktree.runMs), `${worktree.ratio}× the bare git (target ≤ 1.3×); ${spread(worktree.runMs)}`],
  );
}

const guard = await section('guard', 'guard', async () => (await import('./guard.mjs')).benchGuard());
if (guard) {
  results.guard = stamp(guard);
  rows.push(
    ['guard decisions per second', `${guard.decisionsPerSecond}`, `${guard.decisions} decisions over ${guard.cases} corpus cases`],
    ['guard decision latency, median', `${guard.medianMs} ms`, ''],
    ['guard decision latency, p99', `${guard.p99Ms} ms`, `max ${guard.maxMs.toFixed(3)} ms`],
    ['shell parser load (fresh process)', `${guard.parserLoadMs.median.toFixed(1)} ms`, `min ${guard.parserLoadMs.min.toFixed(1)}, max ${guard.parserLoadMs.max.toFixed(1)}`],
  );
}

const sandbox = await section('sandbox', 'sandbox', async () => (await import('./sandbox.mjs')).benchSandbox());
if (sandbox) {
  results.sandbox = stamp(sandbox);
  rows.push(
    ...(sandbox.measured
      ? [
          ['command without sandbox, median', `${sandbox.noneMedianMs.toFixed(1)} ms`, `\`true\` through the process runner, ${sandbox.commands} times, as a run without a sandbox runs it (its supervisor where perl works)`],
          ['command in bubblewrap, median', `${sandbox.bwrapMedianMs.toFixed(1)} ms`, `the same commands, alternating${sandbox.supervised ? ', in the run\'s one bubblewrap with its supervisor' : ''}`],
          ['sandbox overhead per command, median', `${sandbox.overheadMedianMs.toFixed(1)} ms`, `p90 ${sandbox.overheadP90Ms.toFixed(1)} ms`],
          ['sandbox overhead, a bubblewrap per command (per_command), median', `${sandbox.perCommandOverheadMedianMs.toFixed(1)} ms`, `p90 ${sandbox.perCommandOverheadP90Ms.toFixed(1)} ms; the command ${sandbox.perCommandMedianMs.toFixed(1)} ms`],
        ]
      : [['sandbox overhead per command', 'n/a', `not measured: ${sandbox.reason}`]]),
  );
}

// Batch throughput: bench/batch.mjs exports `benchBatch()` returning `{ rows, ...figures }`,
// where rows are [name, value, note] lines for this table. Skipped until that file exists.
const batch = await section('batch', 'batch throughput', async () => {
  try {
    return await (await import('./batch.mjs')).benchBatch({ quick });
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('batch.mjs')) return { skipped: 'bench/batch.mjs is not there yet' };
    throw error;
  }
});
if (batch) {
  const { rows: batchRows = [], ...figures } = batch;
  results.batch = stamp(figures);
  rows.push(...(batch.skipped ? [['batch throughput', 'n/a', batch.skipped]] : batchRows));
}

// Each speed trick against the same build without it (bench/tricks.mjs): a trick stays
// only while its row shows a gain.
const tricks = await section('tricks', 'speed tricks, each left out', async () => (await import('./tricks.mjs')).benchTricks({ quick }));
if (tricks) {
  results.tricks = stamp(tricks);
  const { codeCache, flags } = tricks;
  const stepFigures = (f) => `${f.overheadPerStepMs.toFixed(2)} ms a step, ${mb(f.peakRssMb)} / ${mb(f.megabytePeakRssMb)} (true / 1 MB output)`;
  rows.push(
    ['code cache: first model call with / without', `${codeCache.withRatio}×`, `${codeCache.withoutRatio}× node without; ${ms(codeCache.withMs)} / ${ms(codeCache.withoutMs)}, n ${codeCache.withMs.n}`],
    [`all V8 flags, ${tricks.rounds.steps} rounds of 200 steps`, '', stepFigures(flags.all)],
    ...Object.entries(flags.without).map(([flag, f]) => [`  without ${flag}`, '', stepFigures(f)]),
  );
}

const width = Math.max(...rows.map((row) => row[0].length));
console.log(`\ncorral bench on ${results.machine.cpu} (${results.machine.cpus} CPUs), Node ${results.machine.node}${quick ? ', quick' : ''}\n`);
for (const [name, value, note] of rows) console.log(`${name.padEnd(width)}  ${value.padStart(10)}  ${note}`);

const figures = {
  overheadPerStepMs: results.steps?.overheadPerStepMs,
  firstModelCallRatio: results.cold?.firstModelCallRatio,
  peakRssMb: results.steps?.peakRssMb,
  megabytePeakRssMb: results.steps?.megabytePeakRssMb,
  worktreeRatio: results.worktree?.ratio,
  ...results.sdk?.figures,
};
results.targets = Object.fromEntries(
  Object.entries(TARGETS).map(([key, target]) => {
    const value = figures[key];
    return [key, { ...target, value: value ?? null, met: value === undefined || value === null ? null : value <= target.max }];
  }),
);
console.log('\ntargets');
for (const target of Object.values(results.targets)) {
  const verdict = target.met === null ? 'not measured' : target.met ? 'met' : 'MISSED';
  console.log(`  ${target.what.padEnd(width - 2)}  ${String(target.value ?? '-').padStart(10)}  ≤ ${target.max}: ${verdict}`);
}
if (!canMeasureMemory) console.log('\n(peak memory needs GNU time at /usr/bin/time; install the `time` package)');

writeFileSync(RESULTS, `${JSON.stringify(results, null, 2)}\n`);
console.log(`\nwritten to ${path.relative(process.cwd(), RESULTS)}`);

function machine() {
  const cpus = os.cpus();
  return {
    node: process.version,
    cpus: cpus.length,
    cpu: cpus[0]?.model ?? 'unknown',
    memoryGb: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    platform: `${os.platform()} ${os.release()}`,
    loadAverage: os.loadavg().map((v) => Number(v.toFixed(2))),
  };
}
