import { UsageError } from '../errors.js';
import { parseTrace } from '../trace/read.js';
import type { TokenUsage, TurnBlock } from '../trace/records.js';

// A recorded run's trace read back as the turns of a `replay:<trace.jsonl>` model, with
// the strict reader: a replay must not silently lose a turn. A trace cut short by a crash
// ends in a partial line; it is read up to the last whole one.

/** A turn as the replay model plays it; a recorded turn keeps its stop reason and usage. */
export interface ReplayTurn {
  content: TurnBlock[];
  stopReason?: string;
  usage?: TokenUsage;
}

/** The model's turns of a recorded run, from its `model_response` events in order. */
export function turnsFromTrace(text: string, shownAs: string): ReplayTurn[] {
  const turns: ReplayTurn[] = parseTrace(text, shownAs, { mode: 'strict' }).events.flatMap((event) =>
    event.type === 'model_response'
      ? [{ content: event.content.map((b) => (b.type === 'tool_use' ? { ...b, input: b.input ?? {} } : b)), stopReason: event.stopReason, usage: event.usage }]
      : [],
  );
  if (turns.length === 0) throw new UsageError(`${shownAs}: the trace has no model responses to replay`, [{ file: shownAs, line: 1, column: 1, field: '', message: 'no `model_response` event', hint: 'replay the trace of a run that got at least one answer from its model' }]);
  return turns;
}
