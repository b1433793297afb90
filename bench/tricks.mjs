// The speed tricks corral keeps, each against the same build without it, alternated in the
// same rounds: the code cache (bin/load-bundle.cjs) on the cold start to the first model
// call, and every V8 flag bin/corral.cjs sets on the per-step overhead and peak memory of
// 200 steps of `true` and of 1 MB output. A trick whose figure shows no gain goes.
// Each variant is a copy of bin/ and dist/bundle/ in a temp dir with one thing taken out
// of bin/corral.cjs: the copies keep their own code caches, made under their own flags.
import { cpSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, bashReplayScript, cliV8Flags, benchTicket, corralEnv, makeRepo, measure, round, summarise, tempDir } from './lib.mjs';
import { firstModelRequestAt } from './cold-start.mjs';
import { MEGABYTE_COMMAND } from './steps.mjs';

const BASELINE = path.join(ROOT, 'bench/spawn-baseline.mjs');
const STEPS = 200;
const CACHED_LOAD = 'createBundleLoader()';

export async function benchTricks({ quick = false } = {}) {
  const scratch = tempDir('tricks');
  try {
    const entry = readFileSync(path.join(ROOT, 'bin/corral.cjs'), 'utf8');
    const flags = cliV8Flags(entry);
    if (!entry.includes(CACHED_LOAD)) throw new Error('bench/tricks.mjs: bin/corral.cjs no longer looks as this bench expects; update it');
    const build = (name, source) => makeVariant(path.join(scratch.dir, name), source);
    const all = build('all', entry);
    const noCache = build('no-cache', entry.replace(CACHED_LOAD, '{ load: require, saveCaches() {} }'));
    const withoutFlag = new Map(flags.map((flag, i) => [flag, build(`flag-${i}`, entry.replace(`v8.setFlagsFromString('${flag}');\n`, ''))]));

    const repo = makeRepo(path.join(scratch.dir, 'repo'), {
      files: 20,
      extra: {
        'one.replay.yaml': 'turns:\n  - text: Nothing to do.\n',
        'one.ticket.yaml': 'task: cold start\nallow: ["**"]\nallow_empty: true\nsandbox: none\nmodel: replay:one.replay.yaml\n',
        'true.replay.yaml': bashReplayScript(STEPS, 'true'),
        'true.ticket.yaml': benchTicket('true.replay.yaml', STEPS),
        'mb.replay.yaml': bashReplayScript(STEPS, MEGABYTE_COMMAND),
        'mb.ticket.yaml': benchTicket('mb.replay.yaml', STEPS),
      },
    });
    let runs = 0;
    const run = (corral, ticket) => {
      const runsDir = path.join(scratch.dir, 'runs', String(runs++));
      const result = measure([process.execPath, corral, 'run', '--unattended', '--runs-dir', runsDir, ticket], { cwd: repo, env: corralEnv() });
      return { ...result, runsDir };
    };
    // Once each, so every copy has its code cache before anything is counted.
    for (const corral of [all, noCache, ...withoutFlag.values()]) run(corral, 'one.ticket.yaml');

    const coldRounds = quick ? 6 : 12;
    const cold = { node: [], all: [], noCache: [] };
    for (let i = 0; i < coldRounds; i++) {
      cold.node.push(measure([process.execPath, '-e', '0']).ms);
      for (const [key, corral] of rotate([['all', all], ['noCache', noCache]], i)) {
        const result = run(corral, 'one.ticket.yaml');
        cold[key].push(firstModelRequestAt(result.runsDir) - result.startedAt);
      }
    }
    const nodeMs = summarise(cold.node);
    const ratio = (values) => round(summarise(values).median / nodeMs.median);

    const stepRounds = quick ? 3 : 6;
    const subjects = [['all', all], ...[...withoutFlag].map(([flag, corral]) => [flag, corral])];
    const per = Object.fromEntries(subjects.map(([key]) => [key, { trueMs: [], trueRss: [], mbRss: [] }]));
    const baseline = [];
    for (let i = 0; i < stepRounds; i++) {
      baseline.push(measure([process.execPath, BASELINE, String(STEPS)]).ms);
      for (const [key, corral] of rotate(subjects, i)) {
        const plain = run(corral, 'true.ticket.yaml');
        per[key].trueMs.push(plain.ms);
        per[key].trueRss.push(plain.rssMb);
        per[key].mbRss.push(run(corral, 'mb.ticket.yaml').rssMb);
      }
    }
    // Each round's run against that round's baseline, so load that drifts between rounds
    // falls on every variant alike.
    const figures = (key) => ({
      overheadPerStepMs: summarise(per[key].trueMs.map((ms, i) => (ms - baseline[i]) / STEPS)).median,
      peakRssMb: summarise(per[key].trueRss)?.median ?? null,
      megabytePeakRssMb: summarise(per[key].mbRss)?.median ?? null,
    });
    return {
      rounds: { cold: coldRounds, steps: stepRounds },
      codeCache: {
        nodeMs,
        withMs: summarise(cold.all),
        withoutMs: summarise(cold.noCache),
        withRatio: ratio(cold.all),
        withoutRatio: ratio(cold.noCache),
      },
      flags: { all: figures('all'), without: Object.fromEntries(flags.map((flag) => [flag, figures(flag)])) },
    };
  } finally {
    scratch.dispose();
  }
}

/** A copy of the CLI whose entry is `entrySource`; returns the entry's path. */
function makeVariant(dir, entrySource) {
  mkdirSync(path.join(dir, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  cpSync(path.join(ROOT, 'dist/bundle'), path.join(dir, 'dist/bundle'), { recursive: true, filter: (file) => !file.endsWith('.cache') });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  writeFileSync(path.join(dir, 'bin/corral.cjs'), entrySource);
  return path.join(dir, 'bin/corral.cjs');
}

/** `items` starting at a different one each round, so no variant always follows another. */
function rotate(items, i) {
  const at = i % items.length;
  return [...items.slice(at), ...items.slice(0, at)];
}
