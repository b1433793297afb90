// The second half of `npm run build`: bundles the compiled CLI (dist/cli/) into
// dist/bundle/, which bin/corral.cjs runs. One bundle in place of ~250 small modules (zod,
// yaml, cel-js, commander and corral's own) is what brings a run's start to its first
// model call within target (docs/performance.md). Commands stay split into chunks loaded
// when they run. The chunks are CommonJS, because bin/load-bundle.cjs compiles them
// through V8's code cache, which takes CommonJS-shaped code only. They are not minified,
// only stripped of comments (below): a stack trace must point at code a person can read.
// Each chunk has a source map back to src/*.ts, which Node applies under
// --enable-source-maps (bin/corral.cjs). The Anthropic SDK is bundled too, in the chunk
// loaded only for a real model, so it goes through the code cache as well. Only the shell
// parser (web-tree-sitter and its WASM grammar) stays outside.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist/bundle');
const FETCH_CLASSES = path.join(ROOT, 'dist/agent/fetch-classes.js');

rmSync(OUT, { recursive: true, force: true });
await build({
  input: { corral: path.join(ROOT, 'dist/cli/entry.js') },
  platform: 'node',
  external: [/^node:/, 'web-tree-sitter'],
  logLevel: 'warn',
  plugins: [compiledWithSourceMap()],
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
  output: {
    dir: OUT,
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
  },
});

// What the rewrite above rests on, checked rather than assumed: an import() left in a
// chunk would fail only when a run first reached it.
for (const file of readdirSync(OUT)) {
  if (file.endsWith('.cjs') && hasImportExpression(parseAst(readFileSync(path.join(OUT, file), 'utf8')))) {
    throw new Error(`dist/bundle/${file} still has an import(): bin/load-bundle.cjs cannot run it`);
  }
}

function hasImportExpression(node) {
  if (Array.isArray(node)) return node.some(hasImportExpression);
  if (node === null || typeof node !== 'object') return false;
  return node.type === 'ImportExpression' || Object.values(node).some(hasImportExpression);
}

// tsc's own source maps (dist/**/*.js.map) handed to rolldown with each compiled file, so
// the bundle's maps lead back to src/*.ts rather than to dist/.
function compiledWithSourceMap() {
  const COMPILED = path.join(ROOT, 'dist/');
  return {
    name: 'compiled-with-source-map',
    load(id) {
      if (!id.startsWith(COMPILED) || !id.endsWith('.js')) return null;
      let map;
      try {
        map = readFileSync(`${id}.map`, 'utf8');
      } catch {
        return null;
      }
      return { code: readFileSync(id, 'utf8'), map };
    },
  };
}
