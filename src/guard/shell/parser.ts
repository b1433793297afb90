import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Node, Parser, Tree } from 'web-tree-sitter';

export type { Node as SyntaxNode } from 'web-tree-sitter';

let loading: Promise<Parser> | undefined;

// The grammar prebuilt as WASM, from a package that ships only WASM: tree-sitter-bash itself
// carries an install script that builds a native module corral never loads, and npm warns
// about it on every install. This one is tree-sitter-bash 0.25 built for ABI 15, which the
// pinned web-tree-sitter loads; the guard's tests (test/guard/shell.test.ts) parse with it.
const BASH_GRAMMAR_WASM = '@vscode/tree-sitter-wasm/wasm/tree-sitter-bash.wasm';

/**
 * The bash grammar for tree-sitter, loaded once per process. A run starts loading it
 * while git makes its worktree (the load is about 100 ms of WASM, which the first Bash
 * call would otherwise wait for); a command that judges calls without a run loads it at
 * its first command.
 */
export function loadBashParser(): Promise<Parser> {
  loading ??= (async () => {
    // Its CommonJS build, and the grammar as bytes: an import() of the package, or the
    // import() of fs/promises tree-sitter makes when given a path, would start Node's
    // ES-module loader for this one package, a start-up a run's first decision waits for.
    // The CLI runs WASM on V8's baseline tier (bin/corral.cjs sets the flag, with the
    // others, before any code is compiled).
    const require = createRequire(import.meta.url);
    const { Parser: ParserClass, Language } = require('web-tree-sitter') as typeof import('web-tree-sitter');
    await ParserClass.init();
    const language = await Language.load(await readFile(require.resolve(BASH_GRAMMAR_WASM)));
    const parser = new ParserClass();
    parser.setLanguage(language);
    // V8 compiles a WASM function on its first call, and the grammar's lexer is one huge
    // function: the first parse of any command takes 40 ms and more, the next well under
    // one. Paid here, so it is paid wherever the load is (ahead, while git makes the worktree).
    parser.parse('true')?.delete();
    return parser;
  })();
  return loading;
}

/** Parses `source` and hands the syntax tree to `use`; the tree's WASM memory is freed afterwards. */
export function withSyntaxTree<T>(parser: Parser, source: string, use: (root: Node) => T): T {
  const tree: Tree | null = parser.parse(source);
  if (tree === null) throw new Error('the shell parser returned no tree');
  try {
    return use(tree.rootNode);
  } finally {
    tree.delete();
  }
}
