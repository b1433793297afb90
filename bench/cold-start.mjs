// Cold start, as whole processes against `node -e 0` in the same rounds: `corral --version`,
// and `corral run` on a replay ticket from spawn to its first model request (the time of
// the trace's first `model_request` line, on the same clock as the spawn).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CORRAL, corralEnv, corralRun, makeRepo, measure, repeat, summarise, tempDir } from './lib.mjs';

export async function benchColdStart({ rounds = 15 } = {}) {
  const scratch = tempDir('cold');
  try {
    const repo = makeRepo(path.join(scratch.dir, 'repo'), {
      files: 20,
      extra: {
        'replay.yaml': 'turns:\n  - text: Nothing to do.\n',
        'ticket.yaml': 'task: cold start\nallow: ["**"]\nallow_empty: true\nsandbox: none\nmodel: replay:replay.yaml\n',
      },
    });
    const runsDir = path.join(scratch.dir, 'runs');
    const node = [];
    const version = [];
    const firstCall = [];
    const runTotal = [];
    // Warm the file cache once so the first round is not the odd one out.
    measure([process.execPath, '-e', '0']);
    measure([process.execPath, CORRAL, '--version'], { env: corralEnv() });
    repeat(rounds, (round) => {
      node.push(measure([process.execPath, '-e', '0']).ms);
      version.push(measure([process.execPath, CORRAL, '--version'], { env: corralEnv() }).ms);
      const run = corralRun(path.join(repo, 'ticket.yaml'), { repo, runsDir: path.join(runsDir, String(round)) });
      runTotal.push(run.ms);
      firstCall.push(firstModelRequestAt(path.join(runsDir, String(round))) - run.startedAt);
    });
    const nodeMs = summarise(node);
    const versionMs = summarise(version);
    const firstCallMs = summarise(firstCall);
    return {
      rounds,
      nodeMs,
      versionMs,
      firstModelCallMs: firstCallMs,
      noOpRunMs: summarise(runTotal),
      versionRatio: Number((versionMs.median / nodeMs.median).toFixed(2)),
      firstModelCallRatio: Number((firstCallMs.median / nodeMs.median).toFixed(2)),
    };
  } finally {
    scratch.dispose();
  }
}

/** Epoch ms of the first model request in the one run under `runsDir`. */
function firstModelRequestAt(runsDir) {
  const [runDir] = readdirSync(runsDir);
  for (const line of readFileSync(path.join(runsDir, runDir, 'trace.jsonl'), 'utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line);
    if (event.type === 'model_request') return Date.parse(event.time);
  }
  throw new Error(`no model_request in ${runDir}`);
}
