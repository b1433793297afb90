import { z } from 'zod';

// The `hooks:` block as it is written: the events, matchers and command hooks of the
// protocol other coding agents speak, so a settings file can be copied over unchanged.

export const HOOK_EVENTS = ['PreToolUse', 'PostToolUse', 'Stop'] as const;
export type HookEvent = (typeof HOOK_EVENTS)[number];

// Claude Code's default for a command hook since 2.1.3 (it was 60 before).
export const DEFAULT_TIMEOUT_SECONDS = 600;
const MAX_TIMEOUT_SECONDS = 600;
const NOT_BLANK = /\S/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const matcher = z
  .string()
  .superRefine((text, ctx) => {
    if (matchesEveryTool(text)) return;
    try {
      // Both alone and anchored: `a)(b` compiles once wrapped in `^(?:…)$` but is not a regex.
      new RegExp(text);
      anchored(text);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      ctx.addIssue({ code: 'custom', message: `matcher is not a valid regular expression: ${message}` });
    }
  })
  .meta({
    description:
      'A regular expression over the tool name, matched against the whole name (`Bash` does not match `BashOutput`), e.g. `Edit|Write`. Empty, `*` or absent: every tool. Ignored for Stop.',
  });

export const commandHookSchema = z.strictObject({
  type: z.literal('command').meta({ description: 'The only kind of hook: a command.' }),
  command: z
    .string()
    .regex(NOT_BLANK, { error: 'command is empty' })
    .meta({ description: 'A bash command line. It gets the event as JSON on stdin; exit 2 blocks, with stderr as the reason.' }),
  timeout: z
    .number()
    .positive()
    .max(MAX_TIMEOUT_SECONDS)
    .optional()
    .meta({ description: 'Seconds before the hook and everything it started are killed.', default: DEFAULT_TIMEOUT_SECONDS }),
  env_from_host: z
    .array(z.string().regex(ENV_NAME, { error: (issue) => `\`${String(issue.input)}\` is not an environment variable name` }))
    .optional()
    .meta({ description: "Names of variables of corral's own environment this hook gets (a token it needs); the agent's tools never see them. corral's own field, not Claude Code's." }),
});

export const hookGroupSchema = z.strictObject({
  matcher: matcher.optional(),
  hooks: z.array(commandHookSchema).meta({ description: 'Commands run one after another, in this order.' }),
});

const groups = (when: string) => z.array(hookGroupSchema).optional().meta({ description: `Hooks run ${when}.` });

/** The `hooks:` block, shaped like the other agents' settings so it can be copied over. */
export const hooksSchema = z.strictObject({
  PreToolUse: groups('before a tool call; exit 2 denies the call and tells the model why'),
  PostToolUse: groups('after a tool call; exit 2 sends stderr to the model as feedback'),
  Stop: groups('when the agent wants to end its turn; exit 2 makes it go on, with stderr as the instruction'),
});

export type HooksConfig = z.output<typeof hooksSchema>;
export type CommandHook = z.output<typeof commandHookSchema>;

/** Whether a group's matcher covers every tool: empty or `*`. */
export function matchesEveryTool(matcher: string): boolean {
  return matcher === '' || matcher === '*';
}

/** A matcher as a regular expression over the whole tool name. */
export function anchored(matcher: string): RegExp {
  return new RegExp(`^(?:${matcher})$`);
}
