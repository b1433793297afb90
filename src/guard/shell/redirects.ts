import type { SyntaxNode } from './parser.js';
import type { Redirect } from './types.js';
import { evaluateWord, type WordScope, type WordValue } from './words.js';

export interface RedirectHooks {
  problem(text: string): void;
  /** Analyses the substitutions inside a node (a here-string's word). */
  substitutionsIn(node: SyntaxNode): void;
  /** A heredoc body; `expands` when its delimiter is unquoted, so substitutions in it run. */
  heredoc(body: SyntaxNode, expands: boolean): void;
  /** Commands the grammar hangs inside a heredoc redirection (`cat <<EOF && rm x`): they run after it. */
  trailing(nodes: SyntaxNode[]): void;
}

/**
 * The redirections of one command: what each opens and how. Words the grammar hangs
 * after a redirection target are the command's arguments to bash; they go to
 * `extraArgs`. `2>&1` and `>&-` copy or close descriptors and open nothing.
 */
export function readRedirects(nodes: SyntaxNode[], scope: WordScope, extraArgs: WordValue[][], hooks: RedirectHooks): Redirect[] {
  const out: Redirect[] = [];
  for (const node of nodes) {
    if (node.type === 'heredoc_redirect') {
      const start = node.namedChildren.find((child) => child?.type === 'heredoc_start')?.text ?? '';
      const body = node.namedChildren.find((child) => child?.type === 'heredoc_body');
      if (body) hooks.heredoc(body, !/['"\\]/.test(start));
      const nested = node.namedChildren.filter((child): child is SyntaxNode => child?.type === 'file_redirect');
      const trailing = node.namedChildren.filter((child): child is SyntaxNode => child !== null && !['heredoc_start', 'heredoc_body', 'heredoc_end', 'file_redirect'].includes(child.type));
      if (trailing.length > 0) hooks.trailing(trailing);
      out.push({ operator: '<<', targets: [], access: 'none' }, ...readRedirects(nested, scope, extraArgs, hooks));
      continue;
    }
    if (node.type === 'herestring_redirect') {
      hooks.substitutionsIn(node);
      out.push({ operator: '<<<', targets: [], access: 'none' });
      continue;
    }
    if (node.type !== 'file_redirect') {
      hooks.problem(`the guard does not analyse \`${node.type}\` redirections`);
      continue;
    }
    const operator = node.children.find((child) => child !== null && !child.isNamed)?.type ?? '>';
    const destinations = node.childrenForFieldName('destination').filter((child): child is SyntaxNode => child !== null);
    const [first, ...rest] = destinations;
    for (const word of rest) extraArgs.push(evaluateWord(word, scope));
    if (first === undefined) {
      hooks.problem(`a \`${operator}\` redirection has no target`);
      continue;
    }
    const targets = evaluateWord(first, scope);
    const duplicate = (operator === '>&' || operator === '<&') && targets.every((t) => /^(\d+-?|-)$/.test(t.text));
    if (duplicate) {
      out.push({ operator, targets: [], access: 'none' });
      continue;
    }
    const access = operator === '<' || operator === '<&' ? 'read' : operator === '<>' ? 'readwrite' : 'write';
    out.push({ operator, targets, access });
  }
  return out;
}
