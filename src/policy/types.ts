import type { Effect } from '../trace/records.js';

/** Where a rule comes from; scopes stack in this order and a deny in any beats an allow in any. */
export type Scope = 'baseline' | 'user' | 'project' | 'ticket';

/** A decision on one tool call, always naming the rule that made it. */
export interface Decision {
  effect: Effect;
  /** The deciding rule's id: `baseline.secrets`, `Bash(git push:*)`, a CEL rule's id, `default`. */
  rule: string;
  scope: Scope | 'default' | 'hook';
  reason: string;
  /** The file the rule was written in, when it has one. */
  source?: string;
}

interface RuleBase {
  id: string;
  effect: Effect;
  scope: Scope;
  reason: string;
  /** File the rule came from. */
  source?: string;
}

/**
 * A rule written in Claude Code's settings, read with Claude Code's meaning: `/x` is
 * relative to the settings' root folder (the project root for project settings), a
 * path without a slash matches at any depth (gitignore), and `*` in a Bash rule spans
 * words.
 */
export interface ClaudeCodeDialect {
  kind: 'claude-code';
  /** The folder `/x` is relative to; null for the worktree (project and local settings). */
  root: string | null;
}

/** `Bash(git push:*)`, `Read(./.env)`, `Edit(migrations/**)`, `WebFetch`. */
export interface PatternRule extends RuleBase {
  kind: 'pattern';
  tool: string;
  /** The text between the parentheses; null matches every call of the tool. */
  specifier: string | null;
  /** Set for rules from Claude Code's settings; absent for corral's own syntax. */
  dialect?: ClaudeCodeDialect;
}

/** `{id, when, effect, reason}` with a CEL condition over the call's facts. */
export interface ExpressionRule extends RuleBase {
  kind: 'expression';
  when: string;
  evaluate: (context: Record<string, unknown>) => unknown;
}

export type Rule = PatternRule | ExpressionRule;

export interface Policy {
  rules: Rule[];
  defaultEffect: Effect;
  /** Where the default came from. */
  defaultScope: Scope;
}
