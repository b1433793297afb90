import { InternalError } from '../../errors.js';
import type { CallFacts } from '../facts.js';

type CelParse = typeof import('@marcbachmann/cel-js').parse;
let celParse: CelParse | undefined;

/**
 * Loads the CEL library when `data` (a parsed ticket or config, before it is validated)
 * has a `when` anywhere. Its start-up is several ms of every run's, and only a policy
 * with an expression rule needs it, so every loader awaits this before validating.
 */
export async function prepareConditions(data: unknown): Promise<void> {
  if (mentionsWhen(data, 0)) await loadConditionLanguage();
}

/** Loads the CEL library (once); for callers that build policies without a loader. */
export async function loadConditionLanguage(): Promise<void> {
  celParse ??= (await import('@marcbachmann/cel-js')).parse;
}

function mentionsWhen(value: unknown, depth: number): boolean {
  if (typeof value !== 'object' || value === null || depth > 64) return false;
  if (!Array.isArray(value) && Object.hasOwn(value, 'when')) return true;
  return Object.values(value).some((item) => mentionsWhen(item, depth + 1));
}

export interface TicketContext {
  id: string;
  labels: string[];
  allow: string[];
  forbid: string[];
}

/** Compiles a CEL condition; throws with the parser's message (and a caret under the spot) when it is not valid CEL. */
export function compileCondition(when: string): (context: Record<string, unknown>) => unknown {
  // Unloaded means a loader skipped prepareConditions: an error, never a rule let through.
  if (celParse === undefined) throw new InternalError('a CEL condition was compiled before prepareConditions loaded the CEL library');
  const program = celParse(when);
  return (context) => program(context);
}

/**
 * What a CEL condition sees: `tool`, `args` (the tool input), `commands` (name, argv,
 * cwd, via, check), `paths` (path, relative, access, inside, secret, git, tmp,
 * recursive, known), `problems`, and `ticket` (id, labels, allow, forbid).
 */
export function conditionContext(facts: CallFacts, ticket: TicketContext): Record<string, unknown> {
  return {
    tool: facts.tool,
    args: facts.input,
    commands: facts.commands.map((command) => ({
      name: command.name,
      argv: command.argv,
      cwd: command.cwd ?? '',
      via: command.via,
      check: command.check,
    })),
    paths: facts.paths.map((fact) => ({
      path: fact.path ?? '',
      relative: fact.relative ?? '',
      given: fact.given,
      access: fact.access,
      inside: fact.inside,
      secret: fact.secret,
      git: fact.git,
      tmp: fact.tmp,
      recursive: fact.recursive,
      known: fact.path !== null,
    })),
    problems: facts.problems,
    ticket: { id: ticket.id, labels: ticket.labels, allow: ticket.allow, forbid: ticket.forbid },
  };
}

/**
 * Evaluates a rule's condition. A condition that fails to evaluate, or gives anything
 * but a boolean, counts as matching for deny and ask and as not matching for allow:
 * a broken rule never loosens a decision.
 */
export function conditionHolds(evaluate: (context: Record<string, unknown>) => unknown, context: Record<string, unknown>, effect: 'allow' | 'ask' | 'deny'): { holds: boolean; error?: string } {
  try {
    const value = evaluate(context);
    if (typeof value === 'boolean') return { holds: value };
    return { holds: effect !== 'allow', error: `the condition gave ${typeof value}, not a boolean` };
  } catch (error) {
    return { holds: effect !== 'allow', error: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
  }
}
