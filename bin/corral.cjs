#!/usr/bin/env node
'use strict';
// Thin entry: all wiring lives in the built CLI (run `npm run build` after editing src/),
// bundled into a few CommonJS chunks that load through V8's code cache (load-bundle.cjs).
const path = require('node:path');
const v8 = require('node:v8');
const { createBundleLoader } = require('./load-bundle.cjs');

// V8 refuses a code cache made under other flags, so every flag the CLI ever sets is set
// here, before the first chunk is compiled (heap.ts and parser.ts say why each is set).
v8.setFlagsFromString('--semi-space-growth-factor=1');
v8.setFlagsFromString('--liftoff-only');

const bundle = createBundleLoader();
const { main, tuneHeapForCli } = bundle.load(path.join(__dirname, '../dist/bundle/corral.cjs'));
tuneHeapForCli();
// stdin is made only when asked for: it costs Node a stream, and only a run with someone
// at the terminal reads it.
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, get stdin() { return process.stdin; } };
main(process.argv, io).then((code) => {
  process.exitCode = code;
  bundle.saveCaches();
});
