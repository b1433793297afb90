import fs from 'node:fs';
import type { TraceFileSystem } from '../../src/trace/write.js';

/** The error write(2) gives on a full disk. */
export function enospc(): Error {
  return Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
}

/** Node's own file system for a trace writer, with `writeSync` replaced: a full disk, injected. */
export function traceFileSystemWith(writeSync: TraceFileSystem['writeSync']): TraceFileSystem {
  return {
    openSync: (file, flags) => fs.openSync(file, flags),
    fstatSync: (fd) => fs.fstatSync(fd),
    ftruncateSync: (fd, length) => fs.ftruncateSync(fd, length),
    closeSync: (fd) => fs.closeSync(fd),
    writeSync,
  };
}
