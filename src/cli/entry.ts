// What bin/corral.cjs loads: the CLI and the process settings only the CLI makes. The
// build bundles this file and everything it imports into dist/bundle/corral.cjs.
export { main } from './main.js';
export { tuneHeapForCli } from './heap.js';
