// Two or more builds of corral side by side on the SDK path, alternated in the same rounds
// (the order reversed every other round), against the bench's Messages API stand-in: how
// a change is measured against the build before it (docs/performance-history.md's
// "alternated" figures). A build is a folder holding bin/, package.json and dist/bundle/
// (no code caches: each build makes its own in a first, untimed round) beside a link to
// this checkout's node_modules; --copy makes one from the current build, to change by hand.
//
//   node bench/ab.mjs --copy=DIR                        a build of this checkout in DIR
//   node bench/ab.mjs [--rounds=N] [--steps=N] DIR...   alternated runs of each build
//
// --steps=0 (the default) times spawn to the first request of a one-turn run; --steps=N
// times a run of N Bash steps of `true` (sandbox: none): the whole run, its fixed part
// (the start, the first step, the tail, as bench/sdk.mjs reads them) and its steps split
// into their parts from the trace (stepPartsOf). Medians over the rounds.
import { cpSync, existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT, makeRepo, measure, stepPartsOf, summarise, tempDir } from './lib.mjs';
import { sdkEnv, standinTicket, startStandin } from './sdk.mjs';

const args = process.argv.slice(2);
const option = (name, fallback) => Number(args.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const copyTo = args.find((a) => a.startsWith('--copy='))?.slice('--copy='.length);
const builds = args.filter((a) => !a.startsWith('--')).map((dir) => path.resolve(dir));

/** A build of this checkout's dist/bundle in `dir`, without its code caches. */
function copyBuild(dir) {
  mkdirSync(path.join(dir, 'dist'), { recursive: true });
  cpSync(path.join(ROOT, 'bin'), path.join(dir, 'bin'), { recursive: true });
  cpSync(path.join(ROOT, 'package.json'), path.join(dir, 'package.json'));
  cpSync(path.join(ROOT, 'dist/bundle'), path.join(dir, 'dist/bundle'), { recursive: true, filter: (file) => !file.endsWith('.cache') });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
}

async function compare(dirs, { rounds, steps }) {
  const scratch = tempDir('ab');
  const standin = await startStandin();
  try {
    const repo = makeRepo(path.join(scratch.dir, 'repo'), { files: 20 });
    const ticket = path.join(repo, 'ab.ticket.yaml');
    writeFileSync(ticket, standinTicket(steps, 'none'));
    let runs = 0;
    const runOnce = async (dir) => {
      const id = `ab${runs++}`;
      const runsDir = path.join(scratch.dir, 'runs', id);
      const result = measure([process.execPath, path.join(dir, 'bin/corral.cjs'), 'run', '--unattended', '--runs-dir', runsDir, ticket], {
        cwd: repo,
        env: sdkEnv(`${standin.url}/run/${id}/${steps}/true`),
      });
      const seen = await standin.stats(id);
      const start = seen.firstRequestAt - result.startAt;
      const figures = steps === 0 ? { 'first request': start } : { run: result.ms, start, 'first step': seen.gapsMs[0], tail: result.startAt + result.ms - seen.lastReplyAt, ...stepPartsOf(runsDir) };
      rmSync(runsDir, { recursive: true, force: true });
      return figures;
    };
    for (const dir of dirs) await runOnce(dir);
    const seen = dirs.map(() => []);
    for (let round = 0; round < rounds; round++) {
      for (const index of round % 2 === 0 ? dirs.keys() : [...dirs.keys()].reverse()) seen[index].push(await runOnce(dirs[index]));
    }
    return dirs.map((dir, index) => ({
      dir,
      ...Object.fromEntries(Object.keys(seen[index][0]).filter((key) => key !== 'steps').map((key) => [key, summarise(seen[index].map((figures) => figures[key])).median])),
    }));
  } finally {
    standin.close();
    scratch.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (copyTo) {
    copyBuild(path.resolve(copyTo));
    console.log(`a build of ${ROOT} in ${path.resolve(copyTo)}: change it, then compare it with another`);
  } else if (builds.length < 2 || builds.some((dir) => !existsSync(path.join(dir, 'bin/corral.cjs')))) {
    const missing = builds.find((dir) => !existsSync(path.join(dir, 'bin/corral.cjs')));
    console.error(`${missing ? `no build in ${missing} (no bin/corral.cjs); ` : ''}usage: node bench/ab.mjs --copy=DIR | node bench/ab.mjs [--rounds=N] [--steps=N] DIR_A DIR_B ...`);
    process.exitCode = 64;
  } else {
    const steps = option('steps', 0);
    for (const row of await compare(builds, { rounds: option('rounds', steps === 0 ? 20 : 6), steps })) {
      console.log(`${row.dir}  ${Object.entries(row).filter(([key]) => key !== 'dir').map(([key, ms]) => `${key} ${ms.toFixed(2)} ms`).join('  ')}`);
    }
  }
}
