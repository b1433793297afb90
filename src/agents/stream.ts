import type { TokenUsage, TurnBlock } from '../trace/records.js';

// What corral reads from an agent CLI's event stream, in one shape for every agent: the
// session, each model turn whole, each tool result, and how the session ended.

export type AgentStreamEvent =
  | { kind: 'session'; sessionId: string }
  /** One model turn, whole: its text and tool calls, why it stopped, what it used. */
  | { kind: 'turn'; model: string; content: TurnBlock[]; stopReason: string; usage: TokenUsage }
  /** `declined`: the agent reports the call was refused and never ran (Codex's `status: declined`). */
  | { kind: 'tool_result'; id: string; content: string; isError: boolean; declined?: boolean }
  /**
   * The session ended: `ok` when the agent finished its turn; otherwise `error` says what
   * failed (the model API above all), or `refused` that the model refused.
   */
  | { kind: 'result'; ok: boolean; text: string; error?: string; refused?: boolean; costUsd?: number };

/**
 * Reads one agent's stream line by line; `end` gives what was still held when the stream
 * closed; `flush` what is whole already (a turn whose call is being judged: a call runs
 * only once its turn is over).
 */
export interface StreamReader {
  push(line: string): AgentStreamEvent[];
  flush(): AgentStreamEvent[];
  end(): AgentStreamEvent[];
}

export function usageOf(raw: unknown): TokenUsage {
  const u = (raw !== null && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
  const n = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0);
  return {
    inputTokens: n(u.input_tokens),
    outputTokens: n(u.output_tokens),
    cacheReadTokens: n(u.cache_read_input_tokens ?? u.cached_input_tokens),
    cacheWriteTokens: n(u.cache_creation_input_tokens),
  };
}

/** A tool result's content as text: a string, or the text of its blocks. */
export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content === undefined || content === null ? '' : JSON.stringify(content);
  return content
    .map((block) => {
      if (block !== null && typeof block === 'object' && (block as { type?: unknown }).type === 'text') return String((block as { text?: unknown }).text ?? '');
      return `[${String((block as { type?: unknown })?.type ?? 'block')}]`;
    })
    .join('\n');
}

/** Parses a line as a JSON object; anything else (a log line) is skipped. */
export function jsonLine(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
