#!/usr/bin/env node
// Thin entry: all wiring lives in the built CLI (run `npm run build` after editing src/),
// bundled into one file so that starting corral does not load hundreds of modules.
import { main, tuneHeapForCli } from '../dist/bundle/corral.js';

tuneHeapForCli();
process.exitCode = await main(process.argv, {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  env: process.env,
});
