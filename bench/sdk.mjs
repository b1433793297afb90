// The path users run: `corral run` on a real model id, the Anthropic SDK streaming over
// HTTP from a local Messages API stand-in (bench/messages-standin.mjs, its own process),
// with the shipped bin/corral.cjs and a clean environment. Each figure beside a baseline
// measured in the same rounds, in alternating order:
// - per-step overhead over a bare `bash -c true` spawn, 200 and 1,000 steps of `Bash:
//   true`, without a sandbox and in bubblewrap (whose own spawn is measured bare too);
// - the slope: per-step at 1,000 over per-step at 200;
// - peak memory (GNU time %M) of 200 steps of 1 MiB output and of 1,000 steps of `true`;
// - start to the first request reaching the stand-in, against `node -e 0`, and beside it
//   two floors under that start: the model client alone sending a fixed first request
//   (bench/client-floor.cjs), and Node starting and loading the code a first request
//   needs, with nothing run (bench/load-floor.cjs).
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { build } from 'rolldown';
import { BUNDLE_INPUT, BUNDLE_OUTPUT } from '../scripts/bundle-options.mjs';
import { CORRAL, ROOT, cliV8Flags, corralEnv, expectCallsRan, inTurn, makeRepo, measure, middleMean, round, stepPartsOf, summarise, tempDir } from './lib.mjs';

const BASELINE = path.join(ROOT, 'bench/spawn-baseline.mjs');
const STANDIN = path.join(ROOT, 'bench/messages-standin.mjs');
const LOAD_FLOOR = path.join(ROOT, 'bench/load-floor.cjs');
const CLIENT_FLOOR = path.join(ROOT, 'bench/client-floor.cjs');
// A current model: the SDK prints a deprecation warning on every request for an old one (claude-sonnet-4-5),
// a cost of that model, not of corral.
export const MODEL = 'claude-sonnet-4-6';

/** The SDK path's targets (issue 26), each a ratio or a limit checked on this section's figures. */
export const SDK_TARGETS = {
  sdkOverheadPerStepMs: { max: 5, what: 'SDK: per-step overhead over bash -c true (200 steps)' },
  sdkBwrapOverheadRatio: { max: 1.5, what: 'SDK: per-step overhead in bubblewrap / without (200 steps)' },
  sdkSlopeRatio: { max: 1.2, what: 'SDK: per-step at 1,000 steps / at 200' },
  sdkBwrapSlopeRatio: { max: 1.2, what: 'SDK: the same in bubblewrap (not in --quick)' },
  sdkMegabytePeakRssMb: { max: 100, what: 'SDK: peak memory, 200 steps of 1 MiB output' },
  sdkThousandPeakRssMb: { max: 100, what: 'SDK: peak memory, 1,000 steps of `true`' },
  sdkFirstRequestRatio: { max: 2, what: 'SDK: start to first request / node -e 0' },
};

/** A ticket of `steps` turns that the stand-in plays (its script is in the base URL), in `sandbox`. */
export function standinTicket(steps, sandbox) {
  return [
    'task: corral benchmark; the stand-in plays the model.',
    'allow: ["**"]',
    'allow_empty: true',
    `sandbox: ${sandbox}`,
    `budget: {steps: ${steps + 10}, tokens: 1000000000000, minutes: 120}`,
    `model: ${MODEL}`,
    '',
  ].join('\n');
}

/** The environment of a user's shell, minus what would change how Node starts or what it trusts. */
export function sdkEnv(baseUrl) {
  const env = { ...corralEnv(), ANTHROPIC_API_KEY: 'sk-ant-bench-not-a-real-key', ANTHROPIC_BASE_URL: baseUrl };
  delete env.NODE_OPTIONS;
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

export async function benchSdk({ quick = false } = {}) {
  const scratch = tempDir('sdk');
  const standin = await startStandin();
  try {
    const repo = makeRepo(path.join(scratch.dir, 'repo'), { files: 20 });
    let runs = 0;
    const ticketOf = (steps, sandbox) => {
      const file = path.join(repo, `sdk-${sandbox}-${steps}.ticket.yaml`);
      writeFileSync(file, standinTicket(steps, sandbox));
      return file;
    };
    /** One corral run of `steps` Bash calls of `command`; its timing, memory and what the stand-in saw. */
    const runOnce = async (steps, command, sandbox) => {
      const id = `r${runs++}`;
      const result = measure([process.execPath, CORRAL, 'run', '--unattended', '--runs-dir', path.join(scratch.dir, 'runs', id), ticketOf(steps, sandbox)], {
        cwd: repo,
        env: sdkEnv(`${standin.url}/run/${id}/${steps}/${command}`),
      });
      const seen = await standin.stats(id);
      if (seen.requests !== steps + 1) throw new Error(`corral run ${id} made ${seen.requests} requests, not ${steps + 1}`);
      expectCallsRan(path.join(scratch.dir, 'runs', id), steps);
      return { ...result, seen, ...(steps >= 20 ? { parts: stepPartsOf(path.join(scratch.dir, 'runs', id)) } : {}) };
    };

    // ---- per-step overhead, without a sandbox and in bubblewrap ----
    const stepRounds = quick ? { 200: 2, 1000: 1 } : { 200: 5, 1000: 3 };
    const perStep = {};
    for (const sandbox of ['none', 'bwrap']) {
      perStep[sandbox] = {};
      // --quick leaves out 1,000 steps in bubblewrap: with its baselines, four minutes here.
      for (const steps of quick && sandbox === 'bwrap' ? [200] : [200, 1000]) {
        const run = [];
        const base = [];
        const bwrapBase = [];
        for (let i = 0; i < stepRounds[steps]; i++) {
          // Awaited between the synchronous runs: the stand-in's stats come over HTTP.
          const pending = [];
          inTurn(
            i,
            () => {
              base.push(measure([process.execPath, BASELINE, String(steps)]));
              if (sandbox === 'bwrap') bwrapBase.push(measure([process.execPath, BASELINE, String(steps), '--bwrap']));
            },
            () => pending.push(runOnce(steps, 'true', sandbox)),
          );
          run.push(await pending[0]);
        }
        perStep[sandbox][steps] = stepFigures(steps, run, base, bwrapBase);
      }
    }

    // ---- memory: 200 steps of 1 MiB output ----
    const megabyteRuns = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) megabyteRuns.push(await runOnce(200, 'megabyte', 'none'));
    const megabyte = {
      steps: 200,
      rounds: megabyteRuns.length,
      runMs: summarise(megabyteRuns.map((r) => r.ms)),
      peakRssMb: summarise(megabyteRuns.map((r) => r.rssMb)),
      lastRequestKb: round(megabyteRuns[0].seen.bodyBytes.at(-1) / 1024, 1),
    };

    // ---- start to first request, against node -e 0; the model client alone; loading the code alone ----
    const node = [];
    const first = [];
    const floor = [];
    const client = [];
    const flags = cliV8Flags();
    const loadCode = [process.execPath, LOAD_FLOOR, ...flags];
    const clientCode = [process.execPath, CLIENT_FLOOR, (await bundleModelClient(path.join(scratch.dir, 'model-client'))).entry, MODEL, ...flags];
    let clientRuns = 0;
    /** The model client alone, spawn to its one request reaching the stand-in. */
    const clientOnce = async () => {
      const id = `c${clientRuns++}`;
      const result = measure(clientCode, { env: sdkEnv(`${standin.url}/run/${id}/0/true`) });
      return (await standin.stats(id)).firstRequestAt - result.startAt;
    };
    // Untimed: the first of each makes its code caches.
    measure([process.execPath, '-e', '0']);
    await clientOnce();
    for (let i = 0; i < (quick ? 5 : 15); i++) {
      // Each process runs to its end at once; only the stand-in's stats are awaited after.
      let clientSeen;
      let runSeen;
      inTurn(
        i,
        () => {
          node.push(measure([process.execPath, '-e', '0']).ms);
          floor.push(measure(loadCode).ms);
          clientSeen = clientOnce();
        },
        () => (runSeen = runOnce(0, 'true', 'none')),
      );
      client.push(await clientSeen);
      const r = await runSeen;
      first.push(r.seen.firstRequestAt - r.startAt);
    }
    const nodeMs = summarise(node);
    const firstRequestMs = summarise(first);
    const loadFloorMs = summarise(floor);
    const clientFloorMs = summarise(client);

    const none200 = perStep.none[200];
    const none1000 = perStep.none[1000];
    const bwrap1000 = perStep.bwrap[1000];
    const bwrap200 = perStep.bwrap[200];
    return {
      model: MODEL,
      perStep,
      megabyte,
      firstRequest: {
        nodeMs,
        firstRequestMs,
        clientFloorMs,
        clientFloorRatio: round(clientFloorMs.median / nodeMs.median),
        loadFloorMs,
        loadFloorRatio: round(loadFloorMs.median / nodeMs.median),
        rounds: first.length,
      },
      figures: {
        sdkOverheadPerStepMs: none200.overheadPerStepMs,
        sdkBwrapOverheadRatio: round(bwrap200.overheadPerStepMs / none200.overheadPerStepMs),
        sdkSlopeRatio: round(none1000.overheadPerStepMs / none200.overheadPerStepMs),
        ...(bwrap1000 ? { sdkBwrapSlopeRatio: round(bwrap1000.overheadPerStepMs / bwrap200.overheadPerStepMs) } : {}),
        sdkMegabytePeakRssMb: megabyte.peakRssMb.median,
        sdkThousandPeakRssMb: none1000.peakRssMb.median,
        sdkFirstRequestRatio: round(firstRequestMs.median / nodeMs.median),
      },
    };
  } finally {
    standin.close();
    scratch.dispose();
  }
}

function stepFigures(steps, run, base, bwrapBase) {
  const runMs = summarise(run.map((r) => r.ms));
  const baseMs = summarise(base.map((r) => r.ms));
  const gaps = run.flatMap((r) => r.seen.gapsMs);
  const lastTenth = run.flatMap((r) => r.seen.gapsMs.slice(-Math.ceil(steps / 10)));
  return {
    steps,
    rounds: run.length,
    runMs,
    baselineMs: baseMs,
    overheadPerStepMs: round((runMs.median - baseMs.median) / steps),
    pairedOverheadPerStepMs: summarise(run.map((r, i) => (r.ms - base[i].ms) / steps)),
    // Reply end to next request, as the stand-in saw it (a Bash spawn included); the last
    // tenth of the run alone shows whether a step costs more as the conversation grows.
    gapMs: summarise(gaps),
    lastTenthGapMs: summarise(lastTenth),
    lastRequestKb: round(run[0].seen.bodyBytes.at(-1) / 1024, 1),
    // The run's fixed part, which the per-step figure spreads over its steps: spawn to the
    // first request, the first step (its reply to the next request: the worktree, the
    // guard's and the supervisor's start, the first command), the last reply to the exit.
    fixedMs: {
      start: summarise(run.map((r) => r.seen.firstRequestAt - r.startAt)),
      firstStep: summarise(run.map((r) => r.seen.gapsMs[0])),
      tail: summarise(run.map((r) => r.startAt + r.ms - r.seen.lastReplyAt)),
    },
    // Where a step went (the trace's times, the middle of each run; medians over the runs),
    // beside the two parts of it that are not corral's: the stand-in's own time on a
    // request, and the baseline's spawn of `bash -c true`, which the command stands for.
    partsMs: {
      ...Object.fromEntries(['model', 'guard', 'command', 'rest'].map((part) => [part, round(summarise(run.map((r) => r.parts[part])).median)])),
      standin: round(summarise(run.map((r) => middleMean(r.seen.serveMs))).median),
      spawn: round(baseMs.median / steps),
    },
    peakRssMb: summarise(run.map((r) => r.rssMb)),
    baselinePeakRssMb: summarise(base.map((r) => r.rssMb)),
    ...(bwrapBase.length > 0
      ? {
          bareBwrapMs: summarise(bwrapBase.map((r) => r.ms)),
          // What bubblewrap itself adds to a spawn, measured bare: the floor of any sandboxed step.
          bareBwrapPerSpawnMs: round((summarise(bwrapBase.map((r) => r.ms)).median - baseMs.median) / steps),
        }
      : {}),
  };
}

/**
 * corral's model client (dist/agent/anthropic-model.js) with the SDK, bundled on its own
 * into `dir` with the build's options: the bundle's entry file and every module in it.
 */
export async function bundleModelClient(dir) {
  const { output } = await build({ ...BUNDLE_INPUT, input: { 'model-client': path.join(ROOT, 'dist/agent/anthropic-model.js') }, output: { ...BUNDLE_OUTPUT, dir } });
  return { entry: path.join(dir, 'model-client.cjs'), modules: output.flatMap((item) => (item.type === 'chunk' ? item.moduleIds : [])) };
}

/** The stand-in as a child process; resolves once it listens. */
export async function startStandin() {
  const child = spawn(process.execPath, [STANDIN], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await Promise.race([
    createInterface({ input: child.stdout })[Symbol.asyncIterator]().next().then((r) => [r.value]),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`the Messages API stand-in exited ${code}`)))),
  ]);
  const url = `http://127.0.0.1:${JSON.parse(line).port}`;
  return {
    url,
    // A connection of its own each time (no keep-alive): runs of a minute sit between two calls.
    stats: (id) =>
      new Promise((resolve, reject) => {
        http
          .get(`${url}/stats/${id}`, { agent: false }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (part) => (body += part));
            res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body)) : reject(new Error(`no request of run ${id} reached the stand-in`))));
          })
          .on('error', reject);
      }),
    close() {
      child.stdin.end();
      child.kill();
    },
  };
}
