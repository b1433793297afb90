#!/usr/bin/env node
'use strict';
// Thin entry: all wiring lives in the built CLI (run `npm run build` after editing src/),
// bundled into a few CommonJS chunks that load through V8's code cache (load-bundle.cjs).
const path = require('node:path');
const v8 = require('node:v8');
const { createBundleLoader } = require('./load-bundle.cjs');

// V8 refuses a code cache made under other flags, so every flag the CLI sets is set here,
// before the first chunk is compiled, and nowhere later with another value.
// The young generation keeps its starting size for the life of the process. V8 grows it
// (up to 3 x 16 MB) when many objects survive, and a run's survivors are its conversation,
// which stays anyway: the growth bought little but resident memory, and every process a
// run spawns forks that memory (200 steps of 1 MB output: 142 MB peak before, 100 MB
// after; docs/performance.md). Only the CLI sets this; a library user's process keeps its own.
v8.setFlagsFromString('--semi-space-growth-factor=1');
// The shell parser's WASM on V8's baseline tier only (src/guard/shell/parser.ts says why).
v8.setFlagsFromString('--liftoff-only');
// JavaScript stops short of TurboFan, V8's optimising compiler (Sparkplug, and Maglev where
// a Node has it, still run). A run's code runs a few hundred times, not millions: TurboFan
// spent ≈ 0.5 s of CPU on V8's threads in a 200-step run (the replay script's YAML lexer,
// the syntax tree's walk, the event loop's own functions), CPU taken from the commands the
// run spawns; without it the 200 steps took ≈ 300 ms less (docs/performance.md).
v8.setFlagsFromString('--max-opt=2');

// Node applies the bundle's source maps (stack frames in src/*.ts) only to code its own
// loader compiled; under --enable-source-maps the chunks load through it, without the cache.
const bundle = process.sourceMapsEnabled ? { load: require, saveCaches() {} } : createBundleLoader();
const { main } = bundle.load(path.join(__dirname, '../dist/bundle/corral.cjs'));
// stdin is made only when asked for: it costs Node a stream, and only a run with someone
// at the terminal reads it.
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, get stdin() { return process.stdin; } };
main(process.argv, io).then((code) => {
  process.exitCode = code;
  bundle.saveCaches();
});
