// The second half of `npm run build`: bundles the compiled CLI (dist/cli/) into
// dist/bundle/, which bin/corral.js runs. Loading ~250 small modules (zod, yaml, cel-js,
// commander and corral's own) cost more than everything else a run does before its first
// model call; one bundle loads in a fraction of that (docs/performance.md). Commands
// stay split into chunks loaded when they run. The shell parser's WASM and the Anthropic
// SDK stay outside: they are loaded only when a run needs them, from node_modules.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist/bundle');

rmSync(OUT, { recursive: true, force: true });
await build({
  input: { corral: path.join(ROOT, 'dist/cli/entry.js') },
  platform: 'node',
  external: [/^node:/, 'web-tree-sitter', 'tree-sitter-bash', /^@anthropic-ai\/sdk(\/|$)/],
  logLevel: 'warn',
  output: { dir: OUT, format: 'esm', entryFileNames: '[name].js', chunkFileNames: '[name]-[hash].js' },
});
