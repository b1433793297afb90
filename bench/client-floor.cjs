'use strict';
// The model client's own floor under "start to first request": Node starting, loading
// corral's model client with the SDK (src/agent/anthropic-model.ts, bundled on its own by
// bench/sdk.mjs the way the build bundles the CLI) through the CLI's loader, code cache,
// Node modules and V8 flags, and sending one fixed request to the stand-in. None of the
// rest of corral is loaded and nothing of a run is done: no ticket read or checked, no
// config, no git. What a first request on the SDK path costs before corral does anything.
//
//   node bench/client-floor.cjs BUNDLE MODEL [V8 FLAG...]   (the key and base URL from the environment)
//
// CommonJS, as bin/corral.cjs is: an ES module would add Node's module loader to the floor.
const v8 = require('node:v8');

const { createBundleLoader, requireBuiltinsOf } = require('../bin/load-bundle.cjs');

requireBuiltinsOf('run');
const [bundleFile, model, ...flags] = process.argv.slice(2);
for (const flag of flags) v8.setFlagsFromString(flag);

const bundle = createBundleLoader();
const { createAnthropicModel } = bundle.load(bundleFile);
createAnthropicModel({ model, maxRetries: 0 })
  .complete({
    system: 'You are a coding agent.',
    messages: [{ role: 'user', content: 'Run the ticket.' }],
    tools: [],
    maxTokens: 1024,
    signal: new AbortController().signal,
  })
  .then(
    () => bundle.saveCaches(),
    (error) => {
      console.error(error);
      process.exitCode = 1;
    },
  );
