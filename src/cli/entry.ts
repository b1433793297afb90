// What bin/corral.cjs loads: the CLI. The build bundles this file and everything it
// imports into dist/bundle/corral.cjs; the process settings only the CLI makes (V8 flags)
// are set in bin/corral.cjs, before the bundle is compiled.
export { main } from './main.js';
