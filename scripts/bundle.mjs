// The second half of `npm run build`: bundles the compiled CLI (dist/cli/) into
// dist/bundle/, which bin/corral.cjs runs. Loading ~250 small modules (zod, yaml, cel-js,
// commander and corral's own) cost more than everything else a run does before its first
// model call; a bundle loads in a fraction of that (docs/performance.md). Commands stay
// split into chunks loaded when they run. The chunks are CommonJS, because
// bin/load-bundle.cjs compiles them through V8's code cache, which takes CommonJS-shaped
// code only; and small (no whitespace or comments, short local names, ASCII only),
// because every start reads them: 1.28 MB instead of 1.65. Function and class names are
// kept, so a stack trace still names its functions. The
// Anthropic SDK is bundled too, in the chunk loaded only for a real model: required from
// node_modules it took ~150 ms before a run's first request; through the cache, ~25 ms.
// Only the shell parser (web-tree-sitter and its WASM grammar) stays outside.
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist/bundle');

rmSync(OUT, { recursive: true, force: true });
await build({
  input: { corral: path.join(ROOT, 'dist/cli/entry.js') },
  platform: 'node',
  external: [/^node:/, 'web-tree-sitter', 'tree-sitter-bash'],
  logLevel: 'warn',
  output: {
    dir: OUT,
    format: 'cjs',
    entryFileNames: '[name].cjs',
    chunkFileNames: '[name]-[hash].cjs',
    // A chunk runs in vm.Script (bin/load-bundle.cjs), where import() has no loader to
    // call: a lazy import becomes a require in a promise, which keeps it lazy.
    dynamicImportInCjs: false,
    minify: { compress: false, mangle: { keepNames: true }, codegen: { removeWhitespace: true, asciiOnly: true, legalComments: 'inline' } },
  },
});

// What the rewrite above rests on, checked rather than assumed: an import() left in a
// chunk would fail only when a run first reached it.
for (const file of readdirSync(OUT)) {
  if (hasImportExpression(parseAst(readFileSync(path.join(OUT, file), 'utf8')))) {
    throw new Error(`dist/bundle/${file} still has an import(): bin/load-bundle.cjs cannot run it`);
  }
}

function hasImportExpression(node) {
  if (Array.isArray(node)) return node.some(hasImportExpression);
  if (node === null || typeof node !== 'object') return false;
  return node.type === 'ImportExpression' || Object.values(node).some(hasImportExpression);
}
