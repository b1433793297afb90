// How corral's compiled code is bundled, shared by the build (scripts/bundle.mjs) and by
// the bench's floor of the model client alone (bench/sdk.mjs), which must load the same
// code the same way as the CLI's chunks for its figure to mean anything.
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FETCH_CLASSES = path.join(ROOT, 'dist/agent/fetch-classes.js');

/** Rolldown's input options beside `input` and `plugins`. */
export const BUNDLE_INPUT = {
  platform: 'node',
  external: [/^node:/, 'web-tree-sitter'],
  logLevel: 'warn',
  // Node's Headers and FormData globals load its whole fetch implementation on first
  // touch, 30-50 ms before a run's first model call; the SDK touches both on every request
  // though its transport is node:http (src/agent/fetch-classes.ts). Every free reference
  // to either in the bundle (the SDK's) gets corral's in their place.
  transform: {
    inject: {
      Headers: [FETCH_CLASSES, 'Headers'],
      FormData: [FETCH_CLASSES, 'FormData'],
    },
  },
};

/** Rolldown's output options beside `dir`. */
export const BUNDLE_OUTPUT = {
  format: 'cjs',
  entryFileNames: '[name].cjs',
  chunkFileNames: '[name]-[hash].cjs',
  // A chunk runs in vm.Script (bin/load-bundle.cjs), where import() has no loader to
  // call: a lazy import becomes a require in a promise, which keeps it lazy.
  dynamicImportInCjs: false,
  // The maps name src/ files and lines; the sources themselves stay in src/.
  sourcemap: true,
  sourcemapExcludeSources: true,
  // Every start reads and decodes each chunk it loads, and V8 keeps the source beside
  // the cached code: the comments (most of the SDK's 1.16 MB) and a few non-ASCII
  // characters in them (which make Node decode the whole file slowly as UTF-8) were
  // 37 ms of the start to the first model call. The source maps still lead to src/,
  // where the comments are read. Figure: SDK start to first request.
  comments: false,
  charset: 'ascii',
};
