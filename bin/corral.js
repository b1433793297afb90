#!/usr/bin/env node
// Thin entry: all wiring lives in the built CLI (run `npm run build` after editing src/).
import { tuneHeapForCli } from '../dist/cli/heap.js';
import { main } from '../dist/cli/main.js';

tuneHeapForCli();
process.exitCode = await main(process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
