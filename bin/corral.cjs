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

const bundle = createBundleLoader();
const { main } = bundle.load(path.join(__dirname, '../dist/bundle/corral.cjs'));
// stdin is made only when asked for: it costs Node a stream, and only a run with someone
// at the terminal reads it.
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, get stdin() { return process.stdin; } };
main(process.argv, io).then((code) => {
  process.exitCode = code;
  bundle.saveCaches();
});
