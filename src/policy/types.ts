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

/** `Bash(git push:*)`, `Read(./.env)`, `Edit(migrations/**)`, `WebFetch`. */
export interface PatternRule extends RuleBase {
  kind: 'pattern';
  tool: string;
  /** The text between the parentheses; null matches every call of the tool. */
  specifier: string | null;
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
