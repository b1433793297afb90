import { compileCondition } from './expressions.js';
import { parsePattern } from './patterns.js';
import type { PolicyFile } from './schema.js';
import type { Effect, Policy, Rule, Scope } from './types.js';

export const DEFAULT_EFFECT: Effect = 'ask';

/** The rules of one scope's `policy:` block, in order: deny, ask and allow patterns, then expression rules. */
export function rulesFrom(file: PolicyFile | undefined, scope: Scope, source?: string): Rule[] {
  if (file === undefined) return [];
  const rules: Rule[] = [];
  for (const effect of ['deny', 'ask', 'allow'] as const) {
    for (const text of file[effect] ?? []) {
      const parsed = parsePattern(text);
      if (typeof parsed === 'string') throw new Error(parsed);
      rules.push({
        kind: 'pattern',
        id: text.trim(),
        effect,
        scope,
        reason: `the ${scope} policy ${effect === 'allow' ? 'allows' : effect === 'ask' ? 'asks about' : 'denies'} ${text.trim()}`,
        tool: parsed.tool,
        specifier: parsed.specifier,
        ...(source ? { source } : {}),
      });
    }
  }
  for (const rule of file.rules ?? []) {
    rules.push({
      kind: 'expression',
      id: rule.id,
      effect: rule.effect,
      scope,
      reason: rule.reason ?? `the ${scope} rule ${rule.id}`,
      when: rule.when,
      evaluate: compileCondition(rule.when),
      ...(source ? { source } : {}),
    });
  }
  return rules;
}

/** Scopes stacked: the last scope that sets a default effect decides it. */
export function stackPolicies(layers: { scope: Scope; file: PolicyFile | undefined; source?: string }[]): Policy {
  const policy: Policy = { rules: [], defaultEffect: DEFAULT_EFFECT, defaultScope: 'baseline' };
  for (const layer of layers) {
    policy.rules.push(...rulesFrom(layer.file, layer.scope, layer.source));
    if (layer.file?.default_effect !== undefined) {
      policy.defaultEffect = layer.file.default_effect;
      policy.defaultScope = layer.scope;
    }
  }
  return policy;
}
