import { z } from 'zod';
import { UsageError, type Problem } from '../errors.js';
import { splitTrace } from '../trace/read.js';
import { TRACE_VERSION } from '../trace/write.js';
import type { TokenUsage, TurnBlock } from '../trace/records.js';

// A recorded run's trace read back: as the events of `corral replay`, and as the turns
// of a `replay:<trace.jsonl>` model. A trace cut short by a crash ends in a partial
// line; it is read up to the last whole one.

/** One trace line, with where it was in the file. */
export interface TraceLine {
  line: number;
  event: Record<string, unknown> & { type: string };
}

export interface TraceRead {
  lines: TraceLine[];
  /** The last line was cut short (a crash mid-write) and was left out. */
  truncated: boolean;
}

/** A turn as the replay model plays it; a recorded turn keeps its stop reason and usage. */
export interface ReplayTurn {
  content: TurnBlock[];
  stopReason?: string;
  usage?: TokenUsage;
}

/** Whether a replay file is a trace rather than a YAML script: by its name, or by its first line. */
export function looksLikeTrace(file: string, text: string): boolean {
  if (file.endsWith('.jsonl')) return true;
  const first = text.split('\n', 1)[0] ?? '';
  try {
    const value = JSON.parse(first) as unknown;
    return isObject(value) && typeof value.type === 'string' && typeof value.seq === 'number';
  } catch {
    return false;
  }
}

/** Parses a trace's lines; a line that is not a trace event is a UsageError naming the file and line, except a cut last line. */
export function readTraceText(text: string, shownAs: string): TraceRead {
  const split = splitTrace(text);
  // A crash mid-append leaves the last line without its end; everything before it stands.
  const damaged = split.cutLast ? split.bad.slice(0, -1) : split.bad;
  const problems: { line: number; why: string; hint?: string }[] = damaged.map(({ line, why }) => ({ line, why }));
  if (split.newer) {
    problems.push({ line: split.newer.line, why: `trace format version ${split.newer.version} is newer than this corral reads (${TRACE_VERSION})`, hint: 'use the corral that wrote the trace, or a newer one' });
  }
  const first = problems.sort((a, b) => a.line - b.line)[0];
  if (first) throw traceProblem(shownAs, first.line, first.why, first.hint);
  return { lines: split.events, truncated: split.cutLast };
}

const Block = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.unknown() }),
]);
const Usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), cacheReadTokens: z.number(), cacheWriteTokens: z.number() });
const ModelResponse = z.object({ content: z.array(Block), stopReason: z.string().min(1), usage: Usage.optional() });

/** The model's turns of a recorded run, from its `model_response` events in order. */
export function turnsFromTrace(text: string, shownAs: string): ReplayTurn[] {
  const turns: ReplayTurn[] = [];
  for (const { line, event } of readTraceText(text, shownAs).lines) {
    if (event.type !== 'model_response') continue;
    const parsed = ModelResponse.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw traceProblem(shownAs, line, `model_response ${issue.path.join('.') || 'event'}: ${issue.message}`);
    }
    const { content, stopReason, usage } = parsed.data;
    turns.push({
      content: content.map((b): TurnBlock => (b.type === 'text' ? { type: 'text', text: b.text } : { type: 'tool_use', id: b.id, name: b.name, input: b.input ?? {} })),
      stopReason,
      ...(usage ? { usage } : {}),
    });
  }
  if (turns.length === 0) throw new UsageError(`${shownAs}: the trace has no model responses to replay`, [{ file: shownAs, line: 1, column: 1, field: '', message: 'no `model_response` event', hint: 'replay the trace of a run that got at least one answer from its model' }]);
  return turns;
}

function traceProblem(file: string, line: number, message: string, hint?: string): UsageError {
  const problem: Problem = { file, line, column: 1, field: '', message, ...(hint ? { hint } : {}) };
  return new UsageError(`${file}: invalid trace (line ${line})`, [problem]);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
