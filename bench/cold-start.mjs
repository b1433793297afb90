// Cold start, as whole processes against `node -e 0` in the same rounds: `corral --version`,
// and `corral run` on a replay ticket from spawn to its first model request (the time of
// the trace's first `model_request` line, on the same clock as the spawn); and, with no
// target, the same ticket on the Anthropic model, from spawn to its first request reaching
// a local stand-in for the Messages API, which loads the SDK on the way.
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
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
        'api.ticket.yaml': 'task: cold start\nallow: ["**"]\nallow_empty: true\nsandbox: none\nmodel: claude-sonnet-4-6\n',
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
    const apiMs = await firstApiRequests(repo, path.join(scratch.dir, 'api-runs'), rounds);
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
      firstApiRequestMs: summarise(apiMs),
    };
  } finally {
    scratch.dispose();
  }
}

/** Epoch ms of the first model request in the one run under `runsDir`. */
export function firstModelRequestAt(runsDir) {
  const [runDir] = readdirSync(runsDir);
  for (const line of readFileSync(path.join(runsDir, runDir, 'trace.jsonl'), 'utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line);
    if (event.type === 'model_request') return Date.parse(event.time);
  }
  throw new Error(`no model_request in ${runDir}`);
}

/**
 * Spawn to arrival of the first request at a Messages API stand-in on 127.0.0.1, for
 * `rounds` runs of the ticket on the Anthropic model. The stand-in answers 400, so each
 * run ends there (exit 6) without retries. The runs are spawned, not run synchronously,
 * because the stand-in lives in this process.
 */
async function firstApiRequests(repo, runsDir, rounds) {
  let arrivedAt;
  const server = http.createServer((req, res) => {
    arrivedAt ??= performance.now();
    req.resume();
    req.on('end', () => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: 'corral bench: first request received' } }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const env = { ...corralEnv(), ANTHROPIC_API_KEY: 'sk-bench-not-a-real-key', ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.address().port}` };
  const times = [];
  try {
    for (let round = 0; round < rounds; round++) {
      arrivedAt = undefined;
      const started = performance.now();
      const child = spawn(process.execPath, [CORRAL, 'run', '--unattended', '--runs-dir', path.join(runsDir, String(round)), 'api.ticket.yaml'], { cwd: repo, env, stdio: 'ignore' });
      const code = await new Promise((resolve) => child.on('exit', resolve));
      if (arrivedAt === undefined) throw new Error(`corral run on the Anthropic model exited ${code} before any request reached the stand-in`);
      times.push(arrivedAt - started);
    }
  } finally {
    server.close();
  }
  return times;
}
