import type { SyntaxNode } from './parser.js';
import { expandBraces } from './braces.js';
import { arithmeticNamesVariables, expansionRuns } from './hazards.js';

/** One value a shell word can take: the text the command receives, and the glob it was when one is active. */
export interface WordValue {
  text: string;
  /** A glob pattern (quoted characters backslash-escaped) when the word has unquoted `*`, `?` or `[`. */
  glob: string | null;
  /** Set when the value is not known before the command runs; `text` is then a placeholder. */
  unknown?: string;
  /** Stands for any file under the directory in `text` (find's `{}`). */
  subtree?: boolean;
  /** Not known, but a decimal number bash itself sets (`$!`, `$$`, `$#`, `$?`): never an option or a name. */
  numeric?: boolean;
}

/** What a variable holds at a point of the script: its possible values, or null when it cannot be known. */
export type VariableValue = WordValue[] | null;

export interface WordScope {
  lookup(name: string): VariableValue | undefined;
  home: string | null;
  /** Called for every command or process substitution inside a word: those commands run too. */
  onSubstitution(node: SyntaxNode): void;
  /** Something in the word can run code the guard cannot see. */
  onProblem(text: string): void;
}

/** Bash's upper bound is memory; ours keeps analysis fast and fails closed beyond it. */
export const MAX_WORD_VALUES = 64;

export const unknownValue = (reason: string): WordValue => ({ text: '\u0000unknown', glob: null, unknown: reason });

/**
 * Every value a word can take after quote removal, escapes, tilde, parameter and brace
 * expansion, in bash's order. A part whose value cannot be known (a substitution, an
 * unset or computed variable) makes the whole word unknown, with the reason.
 */
export function evaluateWord(node: SyntaxNode, scope: WordScope): WordValue[] {
  return evaluateArgument([node], scope).flat();
}

/**
 * One argument as bash expands it: alternatives (a variable may hold one of several
 * values), each a list of the words brace expansion makes of it (`{KEY,.env}` is two
 * arguments, not a choice between them).
 */
export function evaluateArgument(nodes: SyntaxNode[], scope: WordScope): WordValue[][] {
  if (nodes.length === 1 && numericSpecial(nodes[0]!)) return [[{ ...unknownValue(`\`${nodes[0]!.text}\` is known only when the command runs`), numeric: true }]];
  let parts: string[] | string = [''];
  for (const node of nodes) {
    const next = pieces(node, scope, false);
    if (typeof next === 'string') {
      parts = next;
      break;
    }
    parts = (parts as string[]).flatMap((left) => next.map((right) => left + right));
    if (parts.length > MAX_WORD_VALUES) {
      parts = 'the word expands to too many values';
      break;
    }
  }
  if (typeof parts === 'string') return [[unknownValue(parts)]];
  const alternatives: WordValue[][] = [];
  let count = 0;
  // `~+` is $PWD: the directory the command runs in, when the analysis knows it.
  const pwd = scope.lookup('PWD');
  const tildes = { home: scope.home, pwd: pwd?.length === 1 && pwd[0]!.unknown === undefined ? pwd[0]!.text : null };
  for (const escaped of parts) {
    const words = expandBraces(escaped, MAX_WORD_VALUES).map((expanded) => finish(expandTilde(expanded, tildes)));
    count += words.length;
    if (count > MAX_WORD_VALUES) return [[unknownValue('the word expands to too many values')]];
    alternatives.push(words);
  }
  if (alternatives.flat().some((value) => value.text.includes('\u0000unknown-tilde'))) return [[unknownValue('`~user` is not resolved')]];
  return alternatives;
}

/** `$!`, `$$`, `$#`, `$?` (braced or double-quoted too): numbers bash sets. */
function numericSpecial(node: SyntaxNode): boolean {
  const inner = node.type === 'string' && node.namedChildren.length === 1 ? node.namedChildren[0]! : node;
  return /^\$(\{[!$#?]\}|[!$#?])$/.test(inner.text) && node.text.replace(/^"|"$/g, '') === inner.text;
}

/**
 * A word as alternatives of "escaped" strings: quoted characters carry a backslash,
 * so later brace and glob steps treat them as literal. A string result is the reason
 * the word cannot be known.
 */
function pieces(node: SyntaxNode, scope: WordScope, quoted: boolean): string[] | string {
  switch (node.type) {
    case 'word':
    case 'number':
    case 'brace_expression':
      return [quoted ? escapeAll(node.text) : unquotedWord(node.text)];
    case 'raw_string':
      return [escapeAll(node.text.slice(1, -1))];
    case 'ansi_c_string':
      return [escapeAll(decodeAnsiC(node.text.slice(2, -1)))];
    case 'string':
    case 'translated_string':
      return concatenate(node.namedChildren.filter((child) => child !== null), scope, true, node);
    case 'string_content':
      return [escapeAll(doubleQuoted(node.text))];
    case 'concatenation':
      return concatenate(node.namedChildren.filter((child) => child !== null), scope, quoted, node);
    case 'simple_expansion':
    case 'expansion':
      return parameter(node, scope, quoted);
    case 'command_substitution':
      scope.onSubstitution(node);
      return 'it holds a command substitution';
    case 'process_substitution':
      scope.onSubstitution(node);
      // The command receives a pipe's name; it is not a file of the repository.
      return ['/dev/fd/63'];
    case 'arithmetic_expansion':
      if (arithmeticNamesVariables(node)) scope.onProblem('arithmetic on variables can run code the guard cannot see');
      visitSubstitutions(node, scope);
      return 'it holds an arithmetic expansion';
    default:
      visitSubstitutions(node, scope);
      return `it holds a \`${node.type}\` the guard does not evaluate`;
  }
}

function concatenate(children: SyntaxNode[], scope: WordScope, quoted: boolean, parent: SyntaxNode): string[] | string {
  // A double-quoted string whose children do not cover its text (an escaped quote
  // split oddly, say) is read from its text when it has no expansions at all.
  if (parent.type === 'string' && children.length === 0) return [escapeAll(doubleQuoted(parent.text.slice(1, -1)))];
  let results: string[] = [''];
  for (const child of children) {
    const part = pieces(child, scope, quoted);
    if (typeof part === 'string') return part;
    const next: string[] = [];
    for (const left of results) for (const right of part) next.push(left + right);
    if (next.length > MAX_WORD_VALUES) return 'the word expands to too many values';
    results = next;
  }
  return results;
}

function parameter(node: SyntaxNode, scope: WordScope, quoted: boolean): string[] | string {
  const nameNode = node.namedChildren.find((child) => child?.type === 'variable_name');
  const name = nameNode?.text;
  const plain = name !== undefined && (node.text === `$${name}` || node.text === `\${${name}}`);
  if (!plain) {
    // Indirection, subscripts, substring offsets and `@P` evaluate text as names,
    // arithmetic or prompts, any of which can run a command substitution.
    if (node.type === 'expansion' && expansionRuns(node)) scope.onProblem(`\`${node.text.slice(0, 40)}\` evaluates text in a way that can run code`);
    visitSubstitutions(node, scope);
    return `\`${node.text}\` is not a plain variable`;
  }
  const value = scope.lookup(name);
  if (value === undefined) return `$${name} is not set by the command`;
  if (value === null || value.some((v) => v.unknown !== undefined)) return `$${name} has no known value`;
  const results: string[] = [];
  for (const v of value) {
    if (quoted) {
      // A loop variable over a glob is one of the files it matched, quoted or not.
      results.push(v.glob ?? escapeAll(v.text));
      continue;
    }
    // Unquoted, the value is split on whitespace and globbed: a split changes the
    // argument count, which the guard does not model.
    if (/[\s]/.test(v.text)) return `$${name} would be split into several words`;
    // A backslash in an unquoted value quotes the next character when bash globs.
    if (v.text.includes('\\')) return `$${name} holds a backslash, which changes how bash globs it`;
    results.push(v.glob ?? escapeAll(v.text).replace(/\\([*?[])/g, '$1'));
  }
  return results;
}

/** The outermost command and process substitutions inside a node: each runs. */
export function visitSubstitutions(node: SyntaxNode, scope: WordScope): void {
  for (const inner of node.descendantsOfType(['command_substitution', 'process_substitution'])) {
    if (inner === null) continue;
    let parent = inner.parent;
    let nested = false;
    while (parent !== null && parent.id !== node.id) {
      if (parent.type === 'command_substitution' || parent.type === 'process_substitution') nested = true;
      parent = parent.parent;
    }
    if (!nested) scope.onSubstitution(inner);
  }
}

/** Unquoted word text: backslash escapes make the next character literal; a line continuation vanishes. */
function unquotedWord(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '\\') {
      const next = text[i + 1];
      i += 1;
      if (next === undefined || next === '\n') continue;
      out += `\\${next}`;
    } else {
      out += char;
    }
  }
  return out;
}

/** Inside double quotes a backslash escapes only `$`, `` ` ``, `"`, `\` and a newline. */
function doubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, char: string) => (char === '\n' ? '' : char));
}

function escapeAll(text: string): string {
  return text.replace(/[\s\S]/g, (char) => `\\${char}`);
}

/**
 * Tilde expansion, before pathname expansion as in bash, so a glob after it is matched
 * in that directory: `~` is $HOME, `~+` the working directory. `~-` ($OLDPWD) and
 * `~user` are not followed: the word is then unknown.
 */
function expandTilde(escaped: string, dirs: { home: string | null; pwd: string | null }): string {
  const match = /^~([^/\\]*)(\/.*)?$/s.exec(escaped) ?? /^([A-Za-z_][A-Za-z0-9_]*=)~([^/\\]*)(\/.*)?$/s.exec(escaped);
  if (match === null) return escaped;
  const [prefix, user, rest] = escaped.startsWith('~') ? ['', match[1]!, match[2]] : [match[1]!, match[2]!, match[3]];
  const dir = user === '' ? dirs.home : user === '+' ? dirs.pwd : null;
  if (dir === null) return prefix === '' || user !== '' ? '\\\u0000unknown-tilde' : escaped;
  return prefix + escapeAll(dir) + (rest ?? '');
}

/** Turns an escaped string into the command's text, and into a glob when an unescaped glob character is left. */
function finish(escaped: string): WordValue {
  let text = '';
  let glob = false;
  for (let i = 0; i < escaped.length; i++) {
    const char = escaped[i]!;
    if (char === '\\' && i + 1 < escaped.length) {
      text += escaped[i + 1];
      i += 1;
      continue;
    }
    if (char === '*' || char === '?' || char === '[') glob = true;
    text += char;
  }
  return { text, glob: glob ? escaped : null };
}

const ANSI_SIMPLE: Record<string, string> = {
  a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v',
  '\\': '\\', "'": "'", '"': '"', '?': '?',
};

/** `$'...'` escapes as bash decodes them. */
export function decodeAnsiC(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const char = body[i]!;
    if (char !== '\\' || i + 1 >= body.length) {
      out += char;
      continue;
    }
    const next = body[i + 1]!;
    i += 1;
    if (next in ANSI_SIMPLE) {
      out += ANSI_SIMPLE[next];
    } else if (next === 'x' || next === 'u' || next === 'U') {
      const max = next === 'x' ? 2 : next === 'u' ? 4 : 8;
      const hex = /^[0-9a-fA-F]+/.exec(body.slice(i + 1, i + 1 + max))?.[0] ?? '';
      if (hex === '') out += `\\${next}`;
      else out += String.fromCodePoint(Math.min(parseInt(hex, 16), 0x10ffff));
      i += hex.length;
    } else if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(body.slice(i))![0];
      out += String.fromCharCode(parseInt(octal, 8) & 0xff);
      i += octal.length - 1;
    } else if (next === 'c' && i + 1 < body.length) {
      out += body[i + 1] === '?' ? '\x7f' : String.fromCharCode(body.charCodeAt(i + 1) & 0x1f);
      i += 1;
    } else {
      out += `\\${next}`;
    }
  }
  return out;
}
