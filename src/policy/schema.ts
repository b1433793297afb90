import { z } from 'zod';
import { compileCondition } from './conditions.js';
import { parsePattern } from './pattern-syntax.js';

const effect = z.enum(['allow', 'ask', 'deny']);

const patternRule = z.string().superRefine((text, ctx) => {
  const parsed = parsePattern(text);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
});

const condition = z.string().min(1).superRefine((text, ctx) => {
  try {
    compileCondition(text);
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0]! : String(error);
    ctx.addIssue({ code: 'custom', message: `not a valid CEL condition: ${message}` });
  }
});

export const expressionRuleSchema = z.strictObject({
  id: z.string().min(1).meta({ description: 'Named in every decision this rule makes.' }),
  when: condition.meta({ description: 'CEL condition over tool, args, commands, paths, problems and ticket.' }),
  effect: effect.meta({ description: 'What the rule decides when the condition holds.' }),
  reason: z.string().optional().meta({ description: 'Shown to the model and the person when the rule decides.' }),
  hook: z
    .enum(['run.start'])
    .optional()
    .meta({ description: '`run.start`: the rule decides from the ticket alone (id, labels, allow, forbid, title) whether a run may start, before any worktree is made. Absent: it decides tool calls.' }),
});

/** A `policy:` block: pattern rules by effect, expression rules, and the default for calls no rule covers. */
export const policySchema = z.strictObject({
  default_effect: effect.optional().meta({ description: 'What happens to a call that nothing allows, asks or denies.', default: 'ask' }),
  allow: z.array(patternRule).optional().meta({ description: 'Tool(specifier) patterns that allow, e.g. `Bash(npm run lint:*)`.' }),
  ask: z.array(patternRule).optional().meta({ description: 'Tool(specifier) patterns that need approval.' }),
  deny: z.array(patternRule).optional().meta({ description: 'Tool(specifier) patterns that deny, e.g. `Bash(git push:*)`, `Read(./.env)`.' }),
  rules: z.array(expressionRuleSchema).optional().meta({ description: 'Expression rules {id, when, effect, reason} with a CEL condition.' }),
});

export type PolicyFile = z.output<typeof policySchema>;
export const POLICY_FIELDS = Object.keys(policySchema.shape);
export const EXPRESSION_RULE_FIELDS = Object.keys(expressionRuleSchema.shape);
