'use strict';
// Loads the bundled CLI (dist/bundle/*.cjs) through V8's code cache. Node 20 has no compile
// cache of its own, and compiling the bundle at every start is what keeps a run's first
// model call over target without it (docs/performance.md). Each chunk is compiled with
// the cache file written beside it by an earlier process; a chunk whose cache was missing
// or refused (another Node, other V8 flags) gets a fresh one when this process is done.
// The build empties dist/bundle, so a cache never outlives the code it was made from.
// Each chunk is compiled under its own path, so a stack frame names the chunk's real file
// and line. CommonJS on purpose: an ES-module entry costs Node its module loader's
// start-up, and vm.Script (which takes a cache) runs CommonJS-shaped code only.
const fs = require('node:fs');
const path = require('node:path');
const v8 = require('node:v8');
const vm = require('node:vm');
const { createRequire, wrap } = require('node:module');

/**
 * A loader for bundle chunks. `load(file)` runs a chunk as CommonJS and returns its
 * exports; a chunk's `require('./other.cjs')` goes through the same loader, so every chunk
 * gets the cache. `saveCaches()` writes the caches this process lacked and returns their
 * files; it never throws.
 */
function createBundleLoader() {
  // V8 refuses a cache made by another V8 version or under other V8 flags (the version tag
  // hashes both, read here once the CLI's own are set): the name keeps two Nodes sharing an
  // install, or runs under other flags (NODE_OPTIONS, a profiler's), from replacing each
  // other's cache on every run, each then compiling everything from source.
  const tag = `v8-${process.versions.v8}-${process.arch}-${v8.cachedDataVersionTag().toString(16)}`;
  const modules = new Map();
  const unsaved = [];

  function load(file) {
    const known = modules.get(file);
    if (known) return known.exports;
    const cacheFile = `${file}.${tag}.cache`;
    const source = fs.readFileSync(file, 'utf8');
    let cachedData;
    try {
      cachedData = fs.readFileSync(cacheFile);
    } catch {
      cachedData = undefined;
    }
    const script = new vm.Script(wrap(source), { filename: file, cachedData });
    if (cachedData === undefined || script.cachedDataRejected) unsaved.push({ script, cacheFile });
    const module = { exports: {}, filename: file, id: file, loaded: false };
    modules.set(file, module);
    const requireOutside = createRequire(file);
    const requireChunk = (id) => (id.startsWith('./') && id.endsWith('.cjs') ? load(path.join(path.dirname(file), id)) : requireOutside(id));
    requireChunk.resolve = requireOutside.resolve;
    script.runInThisContext()(module.exports, requireChunk, module, file, path.dirname(file));
    module.loaded = true;
    return module.exports;
  }

  function saveCaches() {
    const written = [];
    for (const { script, cacheFile } of unsaved.splice(0)) {
      // Written to a temp file and renamed, so a process reading it meanwhile (a batch of
      // corral processes on one machine) sees the old cache or the new, never half of one.
      const temp = `${cacheFile}.${process.pid}.tmp`;
      let fd;
      try {
        // Opened before the cache is made: where the install is read-only, making it
        // would be paid for nothing.
        fd = fs.openSync(temp, 'wx');
        fs.writeFileSync(fd, script.createCachedData());
        fs.closeSync(fd);
        fd = undefined;
        fs.renameSync(temp, cacheFile);
        written.push(cacheFile);
      } catch {
        if (fd !== undefined) fs.closeSync(fd);
        fs.rmSync(temp, { force: true });
      }
    }
    return written;
  }

  return { load, saveCaches };
}

/**
 * Requires the Node modules the build found `command` (the command line's first word) can
 * reach (dist/bundle/builtins.json; the entry's own for any other word), before V8 flags
 * are set: Node's own modules load from a code cache that V8 refuses under other flags.
 * Nothing without that list.
 */
function requireBuiltinsOf(command) {
  let byCommand;
  try {
    byCommand = require('../dist/bundle/builtins.json');
  } catch {
    return;
  }
  for (const id of Object.hasOwn(byCommand, command) ? byCommand[command] : byCommand['']) require(id);
}

module.exports = { createBundleLoader, requireBuiltinsOf };
