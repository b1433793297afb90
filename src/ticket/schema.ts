import { z } from 'zod';
import { EXPRESSION_RULE_FIELDS, POLICY_FIELDS, policySchema } from '../policy/schema.js';
import { findGlobProblem } from './glob-problem.js';
import { DEFAULT_BUDGET, DEFAULT_CHECK_ROUNDS, DEFAULT_COMMAND_TIMEOUT_MS, DEFAULT_KEEP_TOOL_RESULTS, MIN_CONTEXT_WINDOW } from './types.js';

// The ticket file as people write it (snake_case keys, strings or objects for
// commands). `normalise.ts` turns it into the `Ticket` of `types.ts`. Defaults live in
// `types.ts` and the loader; here they only appear as documentation for editors.

export const TICKET_SCHEMA_ID = 'https://corral.dev/schema/ticket.schema.json';
// An id names the branch `corral/<id>`, so it also obeys git's ref-name rules: no `..`,
// no trailing `.` or `.lock`, and a length a file system takes.
export const TICKET_ID_PATTERN = /^(?!.*\.\.)(?!.*\.lock$)(?!.*\.$)[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Timers in Node overflow past 2^31 ms (about 24.8 days); no budget or timeout may come near. */
const MAX_MINUTES = 7 * 24 * 60;
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
const NOT_BLANK = /\S/;

const glob = z
  .string()
  .min(1)
  .superRefine((value, ctx) => {
    // Emptiness is reported by min(1); do not report it twice.
    const problem = value === '' ? null : findGlobProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: problem.message, params: { hint: problem.hint } });
  })
  .meta({ description: 'A glob over repository-relative paths, e.g. `src/**`.' });

export const commandObjectSchema = z.strictObject({
  run: z.string().regex(NOT_BLANK, { error: 'command is empty' }).meta({ description: 'A bash command line.' }),
  name: z.string().min(1).optional().meta({ description: 'Shown in summaries; defaults to the command.' }),
  timeout_seconds: z
    .number()
    .positive()
    .max(MAX_MINUTES * 60)
    .optional()
    .meta({
      description: 'Seconds before the command is killed.',
      default: DEFAULT_COMMAND_TIMEOUT_MS / 1000,
    }),
});

const command = z.union([
  z.string().regex(NOT_BLANK, { error: 'command is empty' }).meta({ description: 'A bash command line.' }),
  commandObjectSchema,
]);

export const sandboxModeSchema = z.enum(['bwrap', 'none', 'auto']);

export const sandboxObjectSchema = z.strictObject({
  mode: sandboxModeSchema.optional().meta({ description: 'How commands are isolated; `auto` uses bubblewrap where it works.', default: 'auto' }),
  read: z
    .array(z.string().min(1))
    .optional()
    .meta({ description: 'Folders outside the worktree commands may read inside bubblewrap (`~/.cache/ms-playwright`); the home is otherwise private and empty. Secret-named folders are refused.' }),
  expose: z
    .array(z.string().min(1))
    .optional()
    .meta({ description: 'Secret-named files of the worktree the agent may read (`.env.test`): they are not masked in the sandbox, and the guard lets them be read.' }),
  per_command: z
    .boolean()
    .optional()
    .meta({
      description:
        'Start a bubblewrap for each command, as before, instead of one per run (setup has its own) with a small supervisor inside that runs each command; the isolation of a command is the same either way.',
      default: false,
    }),
});

/** `sandbox: auto` or `sandbox: {mode, read, expose, per_command}`. */
export const sandboxSchema = z.union([sandboxModeSchema, sandboxObjectSchema]);
export type SandboxField = z.output<typeof sandboxSchema>;

/** The parts of a `sandbox:` field, whichever form it was written in. */
export function sandboxParts(field: SandboxField | undefined): { mode?: z.output<typeof sandboxModeSchema>; read: string[]; expose: string[]; perCommand?: boolean } {
  if (field === undefined) return { read: [], expose: [] };
  if (typeof field === 'string') return { mode: field, read: [], expose: [] };
  return { ...(field.mode ? { mode: field.mode } : {}), read: field.read ?? [], expose: field.expose ?? [], ...(field.per_command === undefined ? {} : { perCommand: field.per_command }) };
}

/**
 * Variables that reach no command whatever `env` says: corral's own model credentials.
 * A ticket may still set one to a value it writes out (that value is the author's).
 */
export const NEVER_PASSED = ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'];

const envName = z.string().regex(ENV_NAME_PATTERN, {
  error: (issue) => `\`${String(issue.input)}\` is not an environment variable name`,
});
const neverPassed = (name: string): string => `${name} is corral's own model key and never reaches a command; set the value a command needs under another name`;

/** `env: [NAME]` or `env: {NAME: value | null | true}`. */
export const envSchema = z.union([
  z.array(envName).superRefine((names, ctx) => {
    names.forEach((name, index) => {
      if (NEVER_PASSED.includes(name)) ctx.addIssue({ code: 'custom', path: [index], message: neverPassed(name) });
    });
  }),
  z
    .record(
      envName,
      z.union([z.string().refine((value) => !value.includes('\0'), { error: 'a value cannot hold a NUL byte' }), z.number().transform(String), z.boolean(), z.null()]),
    )
    .superRefine((entries, ctx) => {
      for (const [name, value] of Object.entries(entries)) {
        if (value === false) ctx.addIssue({ code: 'custom', path: [name], message: 'false is not a value: write null to unset it, true to pass it through, or text such as "false"' });
        if (value === true && NEVER_PASSED.includes(name)) ctx.addIssue({ code: 'custom', path: [name], message: neverPassed(name) });
      }
    }),
]);
export type EnvField = z.output<typeof envSchema>;
type EnvValue = string | null | true;

/** The list and the mapping form alike: a name to its value, `null` to unset, `true` to pass through. */
export function envChanges(field: EnvField | undefined): Record<string, string | null | true> {
  const changes: Record<string, string | null | true> = Object.create(null) as Record<string, string | null | true>;
  if (field === undefined) return changes;
  if (Array.isArray(field)) for (const name of field) changes[name] = true;
  else for (const [name, value] of Object.entries(field)) if (value !== false) changes[name] = value as EnvValue;
  return changes;
}

/** `network: true`, or `network: {setup, agent}`. */
export const networkSchema = z.union([
  z.boolean(),
  z.strictObject({
    setup: z.boolean().optional().meta({ description: 'Whether setup commands (written by the ticket\'s author) get the network.', default: true }),
    agent: z.boolean().optional().meta({ description: 'Whether the agent\'s Bash calls and the checks get the network.', default: false }),
  }),
]);
export type NetworkField = z.output<typeof networkSchema>;

/** Which phases have the network: setup unless turned off, the agent's commands only when turned on. */
export function networkParts(field: NetworkField | undefined, setupNetwork?: boolean): { setup: boolean; agent: boolean } {
  if (field === undefined || typeof field === 'boolean') return { setup: setupNetwork ?? true, agent: field ?? false };
  return { setup: setupNetwork ?? field.setup ?? true, agent: field.agent ?? false };
}

export const budgetSchema = z.strictObject({
  steps: z.int().positive().optional().meta({ description: 'Model turns.', default: DEFAULT_BUDGET.steps }),
  tokens: z.int().positive().optional().meta({ description: 'Input plus output tokens.', default: DEFAULT_BUDGET.tokens }),
  minutes: z.number().positive().max(MAX_MINUTES).optional().meta({ description: 'Wall-clock minutes.', default: DEFAULT_BUDGET.minutes }),
  usd: z.number().positive().optional().meta({ description: 'Estimated cost in US dollars.' }),
});

export const contextSchema = z.strictObject({
  window: z
    .int()
    .min(MIN_CONTEXT_WINDOW)
    .optional()
    .meta({ description: "The model's context window in tokens; by default the model family's (200,000 for Claude models)." }),
  keep_tool_results: z
    .int()
    .min(0)
    .optional()
    .meta({ description: 'How many of the newest tool results stay whole when older ones are cleared to make room.', default: DEFAULT_KEEP_TOOL_RESULTS }),
});
/** The agents a ticket can run: corral's own loop, or an agent CLI under corral's guard. */
export const AGENT_KINDS = ['corral', 'claude-code', 'codex'] as const;
export const agentSchema = z.enum(AGENT_KINDS);

export const ticketFileSchema = z.strictObject({
  id: z
    .string()
    .regex(TICKET_ID_PATTERN, { error: (issue) => `\`${String(issue.input)}\` is not a valid id` })
    .optional()
    .meta({ description: 'Names the run and its branch; defaults to the file name without extension.' }),
  title: z.string().optional().meta({ description: 'A one-line summary for reports.' }),
  repo: z
    .string()
    .min(1)
    .optional()
    .meta({
      description:
        'The git repository to work on, relative to the ticket file; defaults to the repository containing the ticket.',
    }),
  base: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'The commit-ish to start from.', default: 'HEAD' }),
  task: z
    .string()
    .regex(NOT_BLANK, { error: 'task is empty' })
    .meta({ description: 'What to do. In a Markdown ticket, the body after the front matter.' }),
  allow: z.array(glob).min(1).meta({ description: 'Globs of the paths the run may change.' }),
  forbid: z.array(glob).optional().meta({ description: 'Globs of paths that may never change; beats `allow`.' }),
  setup: z
    .array(command)
    .optional()
    .meta({ description: 'Commands run in the worktree before the agent starts (trusted, not guarded).' }),
  checks: z
    .array(command)
    .optional()
    .meta({ description: 'Commands that must all pass when the agent says it is done.' }),
  budget: budgetSchema.optional().meta({ description: 'Limits for the run.' }),
  model: z
    .string()
    .min(1)
    .optional()
    .meta({ description: 'A model id, or `replay:<file>` (relative to the ticket) for a scripted model.' }),
  context: contextSchema
    .optional()
    .meta({ description: "How the conversation is kept within the model's context window: old tool results cleared, then older turns compacted into a summary (see docs/trace.md)." }),
  agent: agentSchema
    .optional()
    .meta({ description: 'Which agent works the ticket: corral\'s own loop, or Claude Code or Codex run headless under corral\'s guard and sandbox (see docs/agents.md).', default: 'corral' }),
  check_rounds: z
    .int()
    .min(0)
    .optional()
    .meta({ description: 'How many times failing checks go back to the model.', default: DEFAULT_CHECK_ROUNDS }),
  allow_empty: z
    .boolean()
    .optional()
    .meta({ description: 'Whether a run that changes nothing may pass.', default: false }),
  policy: policySchema.optional().meta({ description: 'Extra guard rules for this ticket (see docs/guard.md).' }),
  labels: z.array(z.string().min(1)).optional().meta({ description: 'Free-form tags for rules and reports.' }),
  env: envSchema
    .optional()
    .meta({
      description:
        'The environment of setup, tools and checks: a list of names passed through from corral\'s environment, or a mapping of a name to a value (set), `null` (unset, also one corral sets) or `true` (passed through).',
    }),
  sandbox: sandboxSchema
    .optional()
    .meta({ description: 'How commands are isolated (`auto`, `bwrap`, `none`), or `{mode, read, expose}`; `auto` uses bubblewrap where it works.', default: 'auto' }),
  instructions: z
    .boolean()
    .optional()
    .meta({ description: "Whether the repository's AGENTS.md and CLAUDE.md files go into the system prompt.", default: true }),
  setup_network: z
    .boolean()
    .optional()
    .meta({ description: 'Whether setup commands get the network: the same as `network: {setup: ...}`.', default: true }),
  network: networkSchema
    .optional()
    .meta({
      description:
        'Network for sandboxed commands: `true`/`false` for the agent\'s Bash calls and the checks, or `{setup, agent}`. Setup has the network unless `setup: false`.',
      default: false,
    }),
});

/** A ticket file after schema validation, before paths are resolved and defaults filled in. */
export type TicketFile = z.output<typeof ticketFileSchema>;
export type TicketFileCommand = z.output<typeof command>;

/**
 * The field names allowed in the mapping at `path`, for did-you-mean suggestions.
 * Empty when that mapping takes any keys.
 */
export function fieldNamesAt(path: readonly PropertyKey[]): string[] {
  if (path.length === 0) return Object.keys(ticketFileSchema.shape);
  if (path.length === 1 && path[0] === 'budget') return Object.keys(budgetSchema.shape);
  if (path.length === 1 && path[0] === 'context') return Object.keys(contextSchema.shape);
  if (path.length === 1 && path[0] === 'sandbox') return Object.keys(sandboxObjectSchema.shape);
  if (path.length === 1 && path[0] === 'network') return ['setup', 'agent'];
  if (path.length === 2 && (path[0] === 'setup' || path[0] === 'checks')) return Object.keys(commandObjectSchema.shape);
  if (path.length === 1 && path[0] === 'policy') return POLICY_FIELDS;
  if (path.length === 3 && path[0] === 'policy' && path[1] === 'rules') return EXPRESSION_RULE_FIELDS;
  return [];
}

/** The published JSON Schema of ticket files, for editors. */
export function ticketJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(ticketFileSchema, { target: 'draft-2020-12', io: 'input' });
  return {
    $schema,
    $id: TICKET_SCHEMA_ID,
    title: 'corral ticket',
    description:
      'A task for a coding agent and the fence around it. In a Markdown ticket these fields are the YAML front matter and the body is the task.',
    ...rest,
  };
}
