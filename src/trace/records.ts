/**
 * The shapes a run's facts take wherever they are recorded: usage, model turns, guard
 * effects, changes and fence verdicts. They live here, below every layer that produces
 * them, so the trace, the result and the reporters share one definition.
 */

export type Effect = 'allow' | 'ask' | 'deny';

export type TurnBlock =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };

export type BudgetKind = 'steps' | 'tokens' | 'minutes' | 'usd';

export function totalTokens(u: TokenUsage): number {
  return u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens;
}

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
  };
}

export type ChangeKind = 'added' | 'modified' | 'deleted' | 'renamed' | 'mode' | 'type';

export interface Change {
  kind: ChangeKind;
  path: string;
  /** The old path of a rename. */
  from?: string;
}

export interface FenceVerdict {
  change: Change;
  allowed: boolean;
  /** Why a path is not allowed: the forbid glob it matched, or that no allow glob matched. */
  reason?: string;
}

/**
 * A place a tool call touches, as its tool declares it before anything runs: resolved
 * the one way the tool itself will resolve it, and judged by the guard as it is.
 */
export interface CallLocation {
  /** As the model wrote it. */
  given: string;
  /** Absolute: what the tool will open or walk. */
  path: string;
  access: 'read' | 'write' | 'list';
  /** A folder walked whole. */
  recursive: boolean;
  /** What the location is, for explanations: `Edit file_path`. */
  label: string;
  /** A file-name glob the walk keeps to (Grep's `glob`). */
  filter?: string;
}
