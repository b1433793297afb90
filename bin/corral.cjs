#!/usr/bin/env node
'use strict';
// A stop signal (Ctrl-C, SIGTERM, a closed terminal's SIGHUP) means exit 130 from the first
// moment, not the signal's default death (143, 129) while the CLI is still loading: this
// handler exits 130 unless a command has installed its own (a run then stops cleanly and
// saves its work), and again once that one is gone.
function exitOnStopSignal(signal) {
  if (process.listenerCount(signal) > 1) return;
  // The signals' own defaults back: an exit held up (a read stuck in the thread pool is
  // waited for) still ends on the next one.
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(name);
  process.exit(130);
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, exitOnStopSignal);
// Thin entry: all wiring lives in the built CLI (run `npm run build` after editing src/),
// bundled into a few CommonJS chunks that load through V8's code cache (load-bundle.cjs).
const path = require('node:path');
const v8 = require('node:v8');
const { createBundleLoader, requireBuiltinsOf } = require('./load-bundle.cjs');

// Node's own modules (node:http, node:child_process, ...) load from a code cache built into
// Node, and V8 refuses that cache once any flag differs from its default, as the ones below
// do: every one required after them compiles from source, about 20 ms of a run's start.
// So the command's own, as the build lists them (dist/bundle/builtins.json), load first.
// Figure: start to first request.
requireBuiltinsOf(process.argv[2]);

// Every V8 flag corral sets is set here and nowhere else: V8 refuses a code cache made
// under other flags, so they must all be in place before the first chunk is compiled.
// Each stays only while its figure in `npm run bench` shows it pays (docs/performance.md,
// "Speed tricks kept"); only the CLI sets them, a library user's process keeps its own.
//
// The young generation keeps its starting size. V8 grows it when many objects survive,
// and a run's survivors are its conversation, which stays anyway: the growth buys resident
// memory, which every command the run spawns forks. Figure: peak memory, 200 steps of
// 1 MB output.
v8.setFlagsFromString('--semi-space-growth-factor=1');
// WASM (the shell parser's grammar) on V8's baseline tier (Liftoff) only: the optimising
// tier makes the process larger, and every later spawn pays for that; the baseline tier
// parses a command well within a step all the same. Figures: per-step overhead and peak
// memory, 200 steps of `true`. Not --liftoff-only, which means the same: V8 13 (Node 24)
// applies it through these two, worked out once as V8 starts, so set here it did nothing.
// Either of the two alone still tiers up (test/cli/v8-flags.test.ts).
v8.setFlagsFromString('--no-wasm-tier-up --no-wasm-dynamic-tiering');
// JavaScript on V8's interpreter and baseline compiler (Sparkplug) only, without its
// optimising compilers (TurboFan, and Maglev where a Node has it: 24). A run's code runs a
// few hundred times, not millions, so their compiles and code buy nothing back and leave a
// larger process, which every command the run spawns forks. Figure: peak memory, 200 steps
// of `true` and of 1 MB output (the per-step figure moves less than the machine's noise
// either way). Not --max-opt: V8 13 (Node 24) reads that one only as it starts, so set
// here it let both compile on, on threads of their own (test/cli/v8-flags.test.ts).
v8.setFlagsFromString('--no-turbofan --no-maglev');
// The old generation may grow by half of what survived its last full collection before
// the next. Left to itself, V8 picks that factor from how fast its first collections ran,
// up to four times: a run whose start happened to collect quickly then let garbage pile
// up from 12 to 47 MB before collecting again, and peaked 20 MB higher than one that did
// not. Figures: peak memory, 1,000 steps of `true` and 200 steps of 1 MB output.
v8.setFlagsFromString('--heap-growing-percent=50');

// Node applies the bundle's source maps (stack frames in src/*.ts) only to code its own
// loader compiled; under --enable-source-maps the chunks load through it, without the cache.
const bundle = process.sourceMapsEnabled ? { load: require, saveCaches() {} } : createBundleLoader();
const { main, closeInheritedDescriptors } = bundle.load(path.join(__dirname, '../dist/bundle/corral.cjs'));
// Before anything is started: a descriptor whatever started corral left open would reach
// every command, hook and agent CLI (src/proc/inherited-fds.ts).
closeInheritedDescriptors();
// stdin is made only when asked for: it costs Node a stream, and only a run with someone
// at the terminal reads it.
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, get stdin() { return process.stdin; } };
main(process.argv, io).then((code) => {
  process.exitCode = code;
  bundle.saveCaches();
});
