'use strict';
// What loading code alone costs a run before its first model request: the CLI's entry
// chunk, the run command's chunk and the model client's (and every chunk they require),
// through the CLI's own loader and code cache, under the V8 flags bin/corral.cjs sets
// (given as arguments, so the cache is the CLI's and is not refused), with the run's Node
// modules loaded before them as the CLI loads them (dist/bundle/builtins.json). Nothing
// runs and no process is started. bench/sdk.mjs times it beside `node -e 0` and the real start: the
// part of "start to first request" no change to a run's own work can take away.
// CommonJS, as bin/corral.cjs is: an ES module would add Node's module loader to the floor.
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');

const { createBundleLoader, requireBuiltinsOf } = require('../bin/load-bundle.cjs');

requireBuiltinsOf('run');
for (const flag of process.argv.slice(2)) v8.setFlagsFromString(flag);

const BUNDLE = path.join(__dirname, '../dist/bundle');
const files = fs.readdirSync(BUNDLE);
/** The one chunk named `<name>-<hash>.cjs` (scripts/bundle.mjs): run-program-<hash> is not run's. */
function chunk(name) {
  const found = files.filter((file) => file.startsWith(`${name}-`) && /^[\w-]{8}\.cjs$/.test(file.slice(name.length + 1)));
  if (found.length !== 1) throw new Error(`bench/load-floor.cjs: ${found.length} chunks named ${name}-<hash>.cjs in dist/bundle; update this list`);
  return path.join(BUNDLE, found[0]);
}

const bundle = createBundleLoader();
for (const file of [path.join(BUNDLE, 'corral.cjs'), chunk('run'), chunk('anthropic-model')]) bundle.load(file);
