import type { Parser } from 'web-tree-sitter';
import { withSyntaxTree, type SyntaxNode } from './parser.js';

/**
 * Variables that change which program a name runs, how words split and glob, or what
 * code a shell or program loads: setting one makes later commands unknowable.
 */
const SENSITIVE = new Set([
  'PATH', 'IFS', 'GLOBIGNORE', 'HOME', 'XDG_CONFIG_HOME', 'BASH_ENV', 'ENV', 'PS0', 'PS1', 'PS2', 'PS3', 'PS4',
  'PROMPT_COMMAND', 'SHELLOPTS', 'BASHOPTS', 'BASH_ALIASES', 'BASH_CMDS', 'BASH_LOADABLES_PATH', 'INPUTRC',
  'NODE_OPTIONS', 'NODE_PATH', 'PYTHONPATH', 'PYTHONSTARTUP', 'PYTHONHOME', 'PERL5OPT', 'PERL5LIB', 'PERLLIB',
  'RUBYOPT', 'RUBYLIB', 'LESSOPEN', 'LESSCLOSE', 'PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'RIPGREP_CONFIG_PATH',
  'TAR_OPTIONS', 'GREP_OPTIONS', 'GZIP', 'ZDOTDIR', 'OLDPWD', 'PWD', 'CDPATH',
  // Found by red-teaming: each makes a known-safe program load code or read or write elsewhere.
  'GCONV_PATH', 'LOCPATH', 'NLSPATH', 'LESSKEYIN', 'LESSKEY', 'LESSKEYIN_SYSTEM', 'LESS', 'MANPATH', 'MANROFFOPT', 'MANOPT',
  'MAGIC', 'TEXTDOMAINDIR', 'TEXTDOMAIN', 'POSIXLY_CORRECT', 'TMPDIR', 'TMP', 'TEMP', 'NODE_V8_COVERAGE',
  'NODE_REPL_HISTORY', 'NODE_EXTRA_CA_CERTS', 'SHELL', 'TERMINFO', 'TERMCAP', 'HISTFILE', 'GNUPGHOME', 'CURL_HOME', 'WGETRC',
  'OPENSSL_CONF', 'HOSTALIASES', 'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'MAVEN_OPTS', 'GRADLE_OPTS',
  'MAKEFLAGS', 'MFLAGS', 'CC', 'CXX', 'RUSTC_WRAPPER', 'PHPRC', 'COMP_WORDBREAKS', 'SSL_CERT_FILE', 'SSL_CERT_DIR',
]);
/**
 * Families of variables with the same power, matched without regard to case where programs
 * read them so (npm). less reads a dozen (`LESSKEY_CONTENT` holds a lesskey file that can set
 * `LESSOPEN`; `LESSHISTFILE` is written).
 */
const SENSITIVE_FAMILIES = /^(LD_|DYLD_|BASH_FUNC_|PYTHON|PIP_|PERL|RUBY|GEM_|BUNDLE_|CARGO_|DOTNET_|XDG_|SSH_|GIT_|LUA_|TCL|LESS)|^(npm_config_|yarn_|pnpm_|npm_package_)/i;
/** Git variables that only name an author: everything else under GIT_ can point git at other config, dirs or programs. */
export const HARMLESS_GIT = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_TERMINAL_PROMPT$/;

/** Why assigning `name` makes what follows unknowable, or null. */
export function sensitiveVariable(name: string): string | null {
  if (name.startsWith('GIT_')) return HARMLESS_GIT.test(name) ? null : `setting ${name} points git at other config, directories or programs`;
  if (SENSITIVE.has(name) || SENSITIVE_FAMILIES.test(name)) return `setting ${name} changes what later commands run or read`;
  return null;
}

/**
 * Variables a fresh bash gives the integer attribute (`declare -p` shows `-i`): a value
 * assigned to one is evaluated as arithmetic, so `OPTIND='a[$(cmd)]'` runs cmd. SECONDS
 * and LINENO hold numbers and evaluate too once they have the attribute, so they are
 * treated alike. A script's own `declare -i` adds to these (ShellState.integers).
 */
export const INTEGER_VARIABLES: ReadonlySet<string> = new Set(['BASHPID', 'EUID', 'HISTCMD', 'OPTIND', 'PPID', 'RANDOM', 'SRANDOM', 'UID', 'SECONDS', 'LINENO']);

/**
 * Whether text bash evaluates as arithmetic can run code: a name reads a variable whose
 * value is evaluated in turn, a subscript is expanded and can hold a substitution.
 * Only numbers and operators are known to be harmless.
 */
export function arithmeticTextRuns(text: string): boolean {
  return /[A-Za-z_$`\[\]]/.test(text);
}

/**
 * Whether a name that a builtin looks up or assigns (`unset`, `wait -p`, `read`,
 * `printf -v`, `declare`, `test -v`) can run code: anything but a plain name, or a
 * name with a number, `@` or `*` for subscript, is a subscript bash evaluates as arithmetic.
 */
export function nameRuns(text: string): boolean {
  return !/^[A-Za-z_][A-Za-z0-9_]*(\[([0-9]+|[@*])\])?$/.test(text);
}

/**
 * Whether a `${…}` node evaluates text as code: `@P` expands a prompt (running the
 * value's command substitutions), `!` reads a name from a value, and a subscript or a
 * substring offset is arithmetic. The prompt operator is read from the node's own
 * tokens, so `${@@P}`, `${a[0]@P}` and `${!r@P}` are seen alike wherever they sit.
 */
export function expansionRuns(node: SyntaxNode): boolean {
  const children = node.children.filter((child): child is SyntaxNode => child !== null);
  for (let i = 0; i + 1 < children.length; i++) {
    if (!children[i]!.isNamed && children[i]!.type === '@' && children[i + 1]!.text.startsWith('P')) return true;
  }
  return expansionTextRuns(node.text);
}

const PARAMETER = String.raw`#?(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!_-])`;

/** The same, from the text of one `${…}`: for text the grammar does not parse (a heredoc body it misreads). */
export function expansionTextRuns(text: string): boolean {
  if (/@P\}$/.test(text)) return true;
  // `${!prefix*}` and `${!arr[@]}` list names or keys; any other `${!…}` reads a name from a value.
  if (text.startsWith('${!') && !/^\$\{![A-Za-z_][A-Za-z0-9_]*([*@]|\[[@*]\])\}$/.test(text)) return true;
  const subscript = new RegExp(String.raw`^\$\{${PARAMETER}\[([^\]]*)\]`).exec(text);
  if (subscript !== null && !/^([0-9]+|[@*])$/.test(subscript[1]!)) return true;
  // `${v:off}`, `${@:off:len}`: the offset is arithmetic (`${v:-x}` and friends are not).
  const substring = new RegExp(String.raw`^\$\{${PARAMETER}(?:\[[^\]]*\])?:([^-=+?][\s\S]*)\}$`).exec(text);
  return substring !== null && arithmeticTextRuns(substring[1]!);
}

/**
 * Whether text that expands like a double-quoted string (an unquoted heredoc body)
 * holds a `${…}` that evaluates text as code. Each `${` is read to its closing brace.
 */
export function evaluatingExpansionInText(text: string): boolean {
  for (let i = text.indexOf('${'); i !== -1; i = text.indexOf('${', i + 2)) {
    let backslashes = 0;
    while (text[i - 1 - backslashes] === '\\') backslashes += 1;
    if (backslashes % 2 === 1) continue;
    let depth = 0;
    let end = -1;
    for (let j = i + 1; j < text.length; j++) {
      if (text[j] === '\\') j += 1;
      else if (text[j] === '{') depth += 1;
      else if (text[j] === '}' && --depth === 0) {
        end = j;
        break;
      }
    }
    // An expansion that does not close is one bash rejects; refusing to judge it is the safe side.
    if (end === -1 || expansionTextRuns(text.slice(i, end + 1))) return true;
  }
  return false;
}

/**
 * Arithmetic evaluates variable contents as expressions, array subscripts included,
 * and a subscript can hold a command substitution: any arithmetic that names a
 * variable can run code the guard cannot see.
 */
export function arithmeticNamesVariables(node: SyntaxNode): boolean {
  const text = node.text.replace(/^\$?\(\(|\)\)$/g, '');
  return /[A-Za-z_]/.test(text);
}

/**
 * Bash removes every unquoted backslash-newline before it reads words; the grammar
 * keeps some and then reads the rest of a line as a comment (`a\<newline>#b; cat .env`).
 * The pairs are removed the way bash does (not inside single quotes, `$'…'`, comments
 * or quoted heredoc bodies) and the script is parsed again.
 */
export function withoutLineContinuations(parser: Parser, source: string): string {
  if (!source.includes('\\\n')) return source;
  const kept = withSyntaxTree(parser, source, (root) => {
    const ranges: [number, number][] = [];
    const visit = (node: SyntaxNode): void => {
      if (node.type === 'raw_string' || node.type === 'ansi_c_string' || node.type === 'comment') {
        ranges.push([node.startIndex, node.endIndex]);
        return;
      }
      if (node.type === 'heredoc_redirect') {
        const start = node.namedChildren.find((child) => child?.type === 'heredoc_start')?.text ?? '';
        const body = node.namedChildren.find((child) => child?.type === 'heredoc_body');
        if (body && /['"\\]/.test(start)) ranges.push([body.startIndex, body.endIndex]);
      }
      for (const child of node.children) if (child !== null) visit(child);
    };
    visit(root);
    return ranges;
  });
  let out = '';
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '\\' && source[i + 1] === '\n' && !kept.some(([from, to]) => i >= from && i < to)) {
      i += 1;
      continue;
    }
    if (source[i] === '\\' && i + 1 < source.length) {
      out += source[i]! + source[i + 1]!;
      i += 1;
      continue;
    }
    out += source[i];
  }
  return out;
}

/**
 * The command substitutions of text that expands like a double-quoted string (an
 * unquoted heredoc body): `$(…)` with its nesting and quotes followed, and backquotes.
 * Returns the inner scripts, or null when the text does not close them the way bash
 * would need it to (the caller then refuses to judge).
 */
export function substitutionsInText(text: string): { scripts: string[]; arithmetic: boolean } | null {
  const scripts: string[] = [];
  let arithmetic = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') {
      i += 1;
      continue;
    }
    if (char === '`') {
      let end = i + 1;
      for (; end < text.length && text[end] !== '`'; end++) if (text[end] === '\\') end += 1;
      if (end >= text.length) return null;
      const inner = text.slice(i + 1, end);
      if (inner.includes('\\`')) return null;
      scripts.push(inner.replace(/\\([$`\\])/g, '$1'));
      i = end;
      continue;
    }
    if (char === '$' && text[i + 1] === '(') {
      const end = closingParen(text, i + 1);
      if (end === -1) return null;
      const inner = text.slice(i + 2, end);
      if (inner.startsWith('(') && inner.endsWith(')')) {
        // $(( … )): arithmetic, which names variables at its peril; its own $( ) still run.
        if (/[A-Za-z_]/.test(inner)) arithmetic = true;
        const nested = substitutionsInText(inner.slice(1, -1));
        if (nested === null) return null;
        scripts.push(...nested.scripts);
      } else {
        scripts.push(inner);
      }
      i = end;
    }
  }
  return { scripts, arithmetic };
}

/** Index of the `)` that closes the `(` at `open`, skipping quotes, escapes and nested parentheses. */
function closingParen(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === '\\') i += 1;
    else if (char === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) return -1;
      i = close;
    } else if (char === '"') {
      for (i += 1; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i += 1;
      if (i >= text.length) return -1;
    } else if (char === '(') depth += 1;
    else if (char === ')') {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}
