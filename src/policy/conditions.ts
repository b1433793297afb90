import { InternalError } from '../errors.js';

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

/** Compiles a CEL condition; throws with the parser's message (and a caret under the spot) when it is not valid CEL. */
export function compileCondition(when: string): (context: Record<string, unknown>) => unknown {
  // Unloaded means a loader skipped prepareConditions: an error, never a rule let through.
  if (celParse === undefined) throw new InternalError('a CEL condition was compiled before prepareConditions loaded the CEL library');
  const program = celParse(when);
  return (context) => program(context);
}

