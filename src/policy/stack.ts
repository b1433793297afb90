import { compileCondition } from './conditions.js';
import { parsePattern } from './pattern-syntax.js';
import type { PolicyFile } from './schema.js';
import type { ClaudeCodeDialect, ExpressionRule, Policy, Rule, Scope } from './types.js';
import type { Effect } from '../trace/records.js';

export const DEFAULT_EFFECT: Effect = 'ask';

/** One scope's `policy:` block and where it was written. */
export interface PolicyLayer {
  scope: Scope;
  file: PolicyFile | undefined;
  /** The file the block is in. */
  source?: string;
  /** `file:line` of the field at a path inside the block, so a decision points at the line that made it. */
  locate?: (path: (string | number)[]) => string;
  /** Set when the block comes from Claude Code's settings: its rules keep Claude Code's meaning. */
  dialect?: ClaudeCodeDialect;
}

function sourceAt(layer: PolicyLayer, path: (string | number)[]): { source?: string } {
  const source = layer.locate?.(path) ?? layer.source;
  return source ? { source } : {};
}

// What a rule does, said of one policy and of plural settings.
const VERBS = { allow: ['allows', 'allow'], ask: ['asks about', 'ask about'], deny: ['denies', 'deny'] } as const;

/** The tool-call rules of one scope's `policy:` block, in order: deny, ask and allow patterns, then expression rules. */
export function rulesFrom(layer: PolicyLayer): Rule[] {
  const { file, scope } = layer;
  if (file === undefined) return [];
  const rules: Rule[] = [];
  for (const effect of ['deny', 'ask', 'allow'] as const) {
    for (const [index, text] of (file[effect] ?? []).entries()) {
      const parsed = parsePattern(text);
      if (typeof parsed === 'string') throw new Error(parsed);
      rules.push({
        kind: 'pattern',
        id: text.trim(),
        effect,
        scope,
        reason: `the ${scope} ${layer.dialect ? 'Claude Code settings' : 'policy'} ${VERBS[effect][layer.dialect ? 1 : 0]} ${text.trim()}`,
        tool: parsed.tool,
        specifier: parsed.specifier,
        ...(layer.dialect ? { dialect: layer.dialect } : {}),
        ...sourceAt(layer, [effect, index]),
      });
    }
  }
  for (const [index, rule] of (file.rules ?? []).entries()) {
    if (rule.hook === 'run.start') continue;
    rules.push(expressionRule(layer, index));
  }
  return rules;
}

/** The `hook: run.start` rules of the layers, in scope order: they decide whether a run may start at all. */
export function runStartRules(layers: PolicyLayer[]): ExpressionRule[] {
  return layers.flatMap((layer) =>
    (layer.file?.rules ?? []).flatMap((rule, index) => (rule.hook === 'run.start' ? [expressionRule(layer, index)] : [])),
  );
}

function expressionRule(layer: PolicyLayer, index: number): ExpressionRule {
  const rule = layer.file!.rules![index]!;
  return {
    kind: 'expression',
    id: rule.id,
    effect: rule.effect,
    scope: layer.scope,
    reason: rule.reason ?? `the ${layer.scope} rule ${rule.id}`,
    when: rule.when,
    evaluate: compileCondition(rule.when),
    ...sourceAt(layer, ['rules', index]),
  };
}

const STRICTNESS: Effect[] = ['allow', 'ask', 'deny'];

/**
 * Scopes stacked. The default effect is the strictest any scope sets (the first scope
 * to set it is named), so a ticket cannot loosen what a project's default denies.
 */
export function stackPolicies(layers: PolicyLayer[]): Policy {
  const policy: Policy = { rules: [], defaultEffect: DEFAULT_EFFECT, defaultScope: 'baseline' };
  let set = false;
  for (const layer of layers) {
    policy.rules.push(...rulesFrom(layer));
    const effect = layer.file?.default_effect;
    if (effect !== undefined && (!set || STRICTNESS.indexOf(effect) > STRICTNESS.indexOf(policy.defaultEffect))) {
      policy.defaultEffect = effect;
      policy.defaultScope = layer.scope;
      set = true;
    }
  }
  return policy;
}
