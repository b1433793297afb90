// What bin/corral.cjs loads: the CLI. The build bundles this file and everything it
// imports into dist/bundle/corral.cjs; the process settings only the CLI makes (V8 flags,
// closing the descriptors it inherited) are made in bin/corral.cjs, not by a library user.
export { main } from './main.js';
export { closeInheritedDescriptors } from '../proc/inherited-fds.js';
