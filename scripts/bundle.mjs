// The second half of `npm run build`: bundles the compiled CLI (dist/cli/) into
// dist/bundle/, which bin/corral.cjs runs. One bundle in place of ~250 small modules (zod,
// yaml, cel-js, commander and corral's own) is what brings a run's start to its first
// model call within target (docs/performance.md). Commands stay split into chunks loaded
// when they run. The chunks are CommonJS, because bin/load-bundle.cjs compiles them
// through V8's code cache, which takes CommonJS-shaped code only. They are not minified,
// only stripped of comments (bundle-options.mjs): a stack trace must point at code a person can read.
// Each chunk has a source map back to src/*.ts, which Node applies under
// --enable-source-maps (bin/corral.cjs). The Anthropic SDK is bundled too, in the chunk
// loaded only for a real model, so it goes through the code cache as well. Only the shell
// parser (web-tree-sitter and its WASM grammar) stays outside.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';
import { parseAst } from 'rolldown/parseAst';
import { BUNDLE_INPUT, BUNDLE_OUTPUT } from './bundle-options.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'dist/bundle');
// Readable.toWeb and fromWeb: Node loads its web streams at the first call (requiredBuiltins).
const WEB_STREAM_CONVERSIONS = new Set(['toWeb', 'fromWeb']);

rmSync(OUT, { recursive: true, force: true });
const { output } = await build({
  ...BUNDLE_INPUT,
  input: { corral: path.join(ROOT, 'dist/cli/entry.js') },
  plugins: [compiledWithSourceMap()],
  output: { ...BUNDLE_OUTPUT, dir: OUT },
});

// Each chunk's syntax tree, read once for the check below and for builtins.json.
const chunks = output.filter((item) => item.type === 'chunk');
const trees = new Map(chunks.map((chunk) => [chunk.fileName, parseAst(chunk.code)]));

// What the rewrite above rests on, checked rather than assumed: an import() left in a
// chunk would fail only when a run first reached it.
for (const [file, tree] of trees) {
  let lazyImport = false;
  forEachNode(tree, (node) => {
    lazyImport ||= node.type === 'ImportExpression';
  });
  if (lazyImport) throw new Error(`dist/bundle/${file} still has an import(): bin/load-bundle.cjs cannot run it`);
}

writeFileSync(path.join(OUT, 'builtins.json'), `${JSON.stringify(builtinsByCommand(chunks, trees), null, 1)}\n`);

/** Calls `visit` on every node of an ESTree syntax tree. */
function forEachNode(node, visit) {
  if (Array.isArray(node)) {
    for (const item of node) forEachNode(item, visit);
  } else if (node !== null && typeof node === 'object') {
    if (typeof node.type === 'string') visit(node);
    for (const value of Object.values(node)) forEachNode(value, visit);
  }
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

// Node's own modules each command can reach through the chunks, keyed by the command's
// word on the command line ('' for the entry alone: --version, --help, an unknown word).
// bin/corral.cjs requires them before it sets its V8 flags: Node loads its modules from a
// code cache built into it, which V8 refuses once any flag differs from its default, and
// a run's modules then compiled from source (docs/performance.md, "Speed tricks kept").
// A command's modules are src/cli/commands/<word>.ts and <word>-*.ts (guard-hook.ts is
// `corral guard hook`); chunks reached by a lazy import count, as a run loads the model
// client and the shell parser that way. Read from each chunk's require() calls, as the
// chunk's import list leaves out those inside bundled CommonJS packages (commander's).
function builtinsByCommand(chunkList, trees) {
  const chunks = new Map(chunkList.map((chunk) => [chunk.fileName, chunk]));
  const ownBuiltins = new Map(chunkList.map((chunk) => [chunk.fileName, requiredBuiltins(trees.get(chunk.fileName))]));
  const reachable = (start, withLazy) => {
    const builtins = new Set();
    const seen = new Set();
    const visit = (chunk) => {
      if (seen.has(chunk.fileName)) return;
      seen.add(chunk.fileName);
      for (const id of ownBuiltins.get(chunk.fileName)) builtins.add(id);
      for (const id of [...chunk.imports, ...(withLazy ? chunk.dynamicImports : [])]) if (chunks.has(id)) visit(chunks.get(id));
    };
    visit(start);
    return builtins;
  };
  const entry = [...chunks.values()].find((chunk) => chunk.isEntry);
  const byCommand = { '': reachable(entry, false) };
  const COMMAND_MODULE = /\/dist\/cli\/commands\/([a-z]+)(?:-[a-z-]+)?\.js$/;
  for (const chunk of chunks.values()) {
    for (const id of chunk.moduleIds) {
      const word = COMMAND_MODULE.exec(id)?.[1];
      if (word === undefined) continue;
      byCommand[word] = new Set([...(byCommand[word] ?? byCommand['']), ...reachable(chunk, true)]);
    }
  }
  if (byCommand.run === undefined) throw new Error('scripts/bundle.mjs: no chunk holds dist/cli/commands/run.js; update builtinsByCommand');
  return Object.fromEntries(Object.entries(byCommand).map(([word, builtins]) => [word, [...builtins].sort()]));
}

/**
 * The Node modules a syntax tree requires by a literal name, each as `node:<name>`, and
 * node:stream/web where it converts a stream (Node loads web streams on the first call).
 */
function requiredBuiltins(tree) {
  const found = new Set();
  forEachNode(tree, (node) => {
    const [argument] = node.arguments ?? [];
    if (node.type === 'CallExpression' && node.callee.type === 'Identifier' && node.callee.name === 'require' && typeof argument?.value === 'string' && isBuiltin(argument.value)) {
      found.add(argument.value.startsWith('node:') ? argument.value : `node:${argument.value}`);
    }
    if (node.type === 'MemberExpression' && WEB_STREAM_CONVERSIONS.has(node.property?.name)) found.add('node:stream/web');
  });
  return found;
}
