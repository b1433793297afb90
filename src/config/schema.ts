import { z } from 'zod';
import { hooksSchema } from '../policy/hooks-schema.js';
import { policySchema } from '../policy/schema.js';
import { agentSchema, budgetSchema, envSchema, sandboxSchema } from '../ticket/schema.js';

// The config file as people write it: the user's `~/.config/corral/config.yaml` and the
// project's `corral.yaml` have the same shape. `settings.ts` stacks them.

export const CONFIG_SCHEMA_ID = 'https://corral.dev/schema/config.schema.json';
export const DEFAULT_MAX_REFUSALS_IN_A_ROW = 5;
/** An alias is a plain word: letters, digits and `_`. */
export const ALIAS_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
/**
 * A model name of letters only (`fast`, `strong`) is taken for an alias and must be
 * defined; model ids have a digit or a `-` (`claude-haiku-4-5`, `o3`).
 */
export const LOOKS_LIKE_ALIAS = /^[A-Za-z]+$/;

const perMTok = z.number().nonnegative();

const priceSchema = z.strictObject({
  input: perMTok.meta({ description: 'US dollars per million input tokens.' }),
  output: perMTok.meta({ description: 'US dollars per million output tokens.' }),
  cache_write: perMTok.optional().meta({ description: 'Per million tokens written to the prompt cache; default 1.25 × input.' }),
  cache_read: perMTok.optional().meta({ description: 'Per million tokens read from the prompt cache; default 0.1 × input.' }),
});

const modelName = z.string().min(1);
// One level only: an alias names a model, so applying config twice gives the same model.
const aliasTarget = modelName.refine((value) => !LOOKS_LIKE_ALIAS.test(value), {
  error: 'an alias names a model id (e.g. `claude-haiku-4-5`) or `replay:<file>`, not another alias',
});

const agentCliSchema = z.strictObject({
  command: z.string().min(1).meta({ description: 'The CLI to start: a path (absolute, or relative to this file) or a name looked up on PATH.' }),
});

export const configFileSchema = z.strictObject({
  model: modelName.optional().meta({
    description: 'The model of tickets that name none: a model id, an alias from `models`, or `replay:<file>` (relative to this file).',
  }),
  models: z
    .record(z.string().regex(ALIAS_PATTERN, { error: (issue) => `\`${String(issue.input)}\` is not an alias name (a plain word, e.g. \`fast\`)` }), aliasTarget)
    .optional()
    .meta({ description: 'Aliases tickets can name as their model, e.g. `fast: claude-haiku-4-5`, `strong: claude-opus-4-5`.' }),
  budget: budgetSchema.optional().meta({ description: 'Budget defaults for tickets; a ticket\'s own `budget` fields win.' }),
  agent: agentSchema.optional().meta({ description: 'The agent of tickets that name none: `corral` (its own loop), `claude-code` or `codex` (see docs/agents.md).', default: 'corral' }),
  agents: z
    .strictObject({
      'claude-code': agentCliSchema.optional().meta({ description: 'How Claude Code is started.' }),
      codex: agentCliSchema.optional().meta({ description: 'How Codex is started.' }),
    })
    .optional()
    .meta({ description: 'Where the agent CLIs are, when not `claude` and `codex` on PATH.' }),
  prices: z
    .record(modelName, priceSchema)
    .optional()
    .meta({ description: 'Prices of models corral does not know, or corrections, by model id, in US dollars per million tokens.' }),
  sandbox: sandboxSchema.optional().meta({ description: 'How commands are isolated when a ticket does not say.', default: 'auto' }),
  env: envSchema.optional().meta({
    description:
      'The environment of every ticket\'s setup, tools and checks, as a ticket\'s `env`: names passed through, or a name to a value, `null` (unset, also one corral sets) or `true` (passed through). The project\'s entries beat the user\'s; a ticket\'s beat both.',
  }),
  max_refusals_in_a_row: z
    .int()
    .positive()
    .optional()
    .meta({ description: 'Denied or refused calls in a row after which a run stops as blocked (exit 4).', default: DEFAULT_MAX_REFUSALS_IN_A_ROW }),
  model_api: z
    .strictObject({
      timeout_seconds: z.number().positive().max(3600).optional().meta({ description: 'Seconds one model request may take before the SDK gives up on it (SDK default: 600).' }),
      max_retries: z.int().min(0).max(10).optional().meta({ description: 'Retries the SDK makes on 408, 409, 429, 5xx and connection errors (SDK default: 2).' }),
    })
    .optional()
    .meta({ description: 'How the Anthropic SDK talks to the API; its own retries and timeouts, configured, never re-implemented.' }),
  policy: policySchema.optional().meta({ description: 'Guard rules of this scope (see docs/guard.md); deny beats ask beats allow across scopes.' }),
  hooks: hooksSchema.optional().meta({ description: 'PreToolUse, PostToolUse and Stop command hooks.' }),
  claude_code: z
    .strictObject({
      settings: z
        .boolean()
        .optional()
        .meta({ description: "Read Claude Code's settings files (~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json) as scopes: their permissions, hooks, env and additionalDirectories.", default: true }),
    })
    .optional()
    .meta({ description: "What corral takes over from Claude Code's files; the project's choice wins over the user's." }),
});

export type ConfigFile = z.output<typeof configFileSchema>;
export type PriceFile = z.output<typeof priceSchema>;

/** The field names allowed in the mapping at `path` of a config file, for did-you-mean. */
export function configFieldNamesAt(path: readonly PropertyKey[]): string[] {
  return fieldNames(configFileSchema, path);
}

/** Walks a zod schema along a document path to the object there and lists its keys. */
function fieldNames(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let current: z.ZodType | undefined = unwrap(schema);
  for (const segment of path) {
    if (current instanceof z.ZodObject) current = unwrap((current.shape as Record<string, z.ZodType>)[String(segment)]);
    else if (current instanceof z.ZodArray) current = unwrap(current.element as z.ZodType);
    else if (current instanceof z.ZodRecord) current = unwrap(current.valueType as z.ZodType);
    else return [];
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault) current = current.unwrap() as z.ZodType;
  return current;
}

/** The published JSON Schema of config files, for editors. */
export function configJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(configFileSchema, { target: 'draft-2020-12', io: 'input' });
  return {
    $schema,
    $id: CONFIG_SCHEMA_ID,
    title: 'corral config',
    description: 'The project\'s corral.yaml or the user\'s ~/.config/corral/config.yaml: policy, models, budgets, prices, sandbox and hooks.',
    ...rest,
  };
}
