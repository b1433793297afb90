// What bin/corral.js loads: the CLI and the process settings only the CLI makes. The
// build bundles this file and everything it imports into dist/bundle/corral.js.
export { main } from './main.js';
export { tuneHeapForCli } from './heap.js';
