// Errors that make a run meaningless. What the model can recover from is never one of
// these: it goes back to the model as an is_error tool result instead.

export const EXIT = {
  passed: 0,
  failed: 1,
  fence_violated: 2,
  budget_exhausted: 3,
  blocked: 4,
  refused: 5,
  model_error: 6,
  host_changed: 7,
  usage: 64,
  internal: 70,
  interrupted: 130,
} as const;

/** One problem found in a ticket or config file, located for a person to fix. */
export interface Problem {
  file: string;
  line: number;
  column: number;
  /** Dotted path of the field, e.g. `budget.steps`; empty for the whole file. */
  field: string;
  message: string;
  hint?: string;
}

export function formatProblem(p: Problem): string {
  const where = `${p.file}:${p.line}:${p.column}`;
  const field = p.field ? ` ${p.field}:` : '';
  const hint = p.hint ? ` (${p.hint})` : '';
  return `${where}:${field} ${p.message}${hint}`;
}

/** Bad usage, ticket or config: exit 64. */
export class UsageError extends Error {
  readonly exitCode = EXIT.usage;
  constructor(
    message: string,
    readonly problems: Problem[] = [],
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A bug or a broken environment corral cannot work around: exit 70. */
export class InternalError extends Error {
  readonly exitCode = EXIT.internal;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InternalError';
  }
}
