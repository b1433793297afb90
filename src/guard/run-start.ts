import { conditionHolds } from './rules/expressions.js';
import type { Decision, ExpressionRule } from '../policy/types.js';

/**
 * Whether a run may start, from `hook: run.start` rules over the ticket alone (`ticket.id`,
 * `labels`, `allow`, `forbid`, `title`). Deny beats ask; a condition that cannot be
 * evaluated counts as matching (never loosens). Null: nothing stops the run.
 */
export function decideRunStart(rules: ExpressionRule[], ticket: { id: string; labels: string[]; allow: string[]; forbid: string[]; title?: string }): Decision | null {
  const context = { ticket: { id: ticket.id, labels: ticket.labels, allow: ticket.allow, forbid: ticket.forbid, title: ticket.title ?? '' } };
  for (const effect of ['deny', 'ask'] as const) {
    for (const rule of rules) {
      if (rule.effect !== effect) continue;
      const result = conditionHolds(rule.evaluate, context, effect);
      if (!result.holds) continue;
      const reason = result.error ? `${rule.reason} (the condition could not be evaluated: ${result.error})` : rule.reason;
      return { effect, rule: rule.id, scope: rule.scope, reason, ...(rule.source ? { source: rule.source } : {}) };
    }
  }
  return null;
}
