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
  'TAR_OPTIONS', 'GREP_OPTIONS', 'GZIP', 'ZDOTDIR', 'OLDPWD', 'PWD',
]);
/** Git variables that only name an author: everything else under GIT_ can point git at other config, dirs or programs. */
const HARMLESS_GIT = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_TERMINAL_PROMPT$/;

/** Why assigning `name` makes what follows unknowable, or null. */
export function sensitiveVariable(name: string): string | null {
  if (SENSITIVE.has(name) || /^(LD_|DYLD_|npm_config_|NPM_CONFIG_)/.test(name)) return `setting ${name} changes what later commands run or read`;
  if (name.startsWith('GIT_') && !HARMLESS_GIT.test(name)) return `setting ${name} points git at other config, directories or programs`;
  return null;
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
