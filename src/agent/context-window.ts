import { isReplayModel } from '../ticket/model-id.js';
import { DEFAULT_CONTEXT_WINDOW } from '../ticket/types.js';
import type { TokenUsage } from '../trace/records.js';

// How big a model's context window is, and where in it corral starts to make room. The
// thresholds are fractions of what is left for the prompt once the reply's max_tokens is
// set aside, so a conversation is cut back long before the API would refuse it, and cut
// back far enough that the next edit is many steps away (each edit changes the start of
// the conversation, which costs one prompt-cache write).

/** Past this share of the prompt's room, old tool results are cleared. */
const EDIT_AT = 0.6;
/** After an edit the conversation should be at most this share; if clearing leaves it above, it is compacted. */
const EDIT_TO = 0.35;

/**
 * Known windows by model family, longest prefix first. Claude models answer 200k tokens
 * by default (a 1M window needs a beta header corral does not send); a replay model plays
 * what a Claude model would.
 */
const WINDOWS: readonly (readonly [prefix: string, tokens: number])[] = [
  ['claude-', 200_000],
];

/** The context window of a model id: the ticket's own value, else the family's, else the default. */
export function contextWindowOf(modelId: string, configured?: number): number {
  if (configured !== undefined) return configured;
  if (isReplayModel(modelId)) return DEFAULT_CONTEXT_WINDOW;
  return WINDOWS.find(([prefix]) => modelId.startsWith(prefix))?.[1] ?? DEFAULT_CONTEXT_WINDOW;
}

/** Where edits start and how far they go, in tokens of the whole prompt (system, tools, messages). */
export interface ContextThresholds {
  window: number;
  /** Above this estimate, the conversation is edited before the next request. */
  editAt: number;
  /** What an edit aims for. */
  editTo: number;
}

export function contextThresholds(window: number, maxTokens: number): ContextThresholds {
  // The reply's tokens count against the window too; a window too small for a whole
  // reply (a test's) still leaves half of it to the prompt.
  const room = window - Math.min(maxTokens, Math.floor(window / 2));
  return { window, editAt: Math.floor(room * EDIT_AT), editTo: Math.floor(room * EDIT_TO) };
}

/** The prompt a turn was answered for, as the API counts it: uncached, read from and written to the cache. */
export function promptTokens(usage: TokenUsage): number {
  return usage.inputTokens + usage.cacheReadTokens + usage.cacheWriteTokens;
}

/** Tokens from a size in bytes: about four a token for English and code, as the API's own guidance puts it. */
export function tokensOfBytes(bytes: number): number {
  return Math.ceil(bytes / 4);
}
