import { describeCall } from '../text/describe-call.js';
import { judgeCall } from './call-pipeline.js';
import type { RunEvent } from '../trace/events.js';
import type { Effect } from '../trace/records.js';
import type { Guard } from '../guard/guard.js';

// Recorded tool calls judged again by today's guard: what a policy change would have
// done to real sessions. Pure but for the guard it is handed.

/** A tool call of a recorded run, with the decision it got then. */
export interface RecordedCall {
  step: number;
  id: string;
  tool: string;
  input: unknown;
  then: { effect: Effect; rule: string; scope: string };
}

/** One recorded call whose decision today is not the one it got then. */
export interface DecisionChange {
  step: number;
  id: string;
  tool: string;
  /** A short rendering: `Bash(git push)`, `Write(src/a.js)`. */
  call: string;
  input: unknown;
  then: { effect: Effect; rule: string; scope: string };
  now: { effect: Effect; rule: string; scope: string; reason: string };
}

export interface DecisionReplay {
  /** Recorded calls with a recorded decision, judged again. */
  calls: number;
  /** Calls the trace records without a decision (a run cut short), or decided by a hook or an interrupt, not the guard: not judged. */
  undecided: number;
  /** Calls whose effect would differ today. */
  changed: DecisionChange[];
  /** Same effect, decided by another rule today. */
  otherRule: DecisionChange[];
}

/** Pairs every `tool_call` with its `decision` by id, in trace order. */
export function recordedCalls(events: readonly RunEvent[]): { calls: RecordedCall[]; undecided: number } {
  const decisions = new Map<string, RecordedCall['then']>();
  for (const event of events) {
    if (event.type === 'decision') decisions.set(event.id, { effect: event.effect, rule: event.rule, scope: event.scope });
  }
  const calls: RecordedCall[] = [];
  let undecided = 0;
  for (const event of events) {
    if (event.type !== 'tool_call') continue;
    const then = decisions.get(event.id);
    if (then === undefined) undecided += 1;
    else calls.push({ step: event.step, id: event.id, tool: event.tool, input: event.input, then });
  }
  return { calls, undecided };
}

/**
 * Judges recorded calls with `guard`. Absolute paths into the recorded worktree (gone now)
 * are moved to `rebase.to`, where relative paths resolve too.
 */
export async function replayDecisions(events: readonly RunEvent[], guard: Guard, rebase?: { from: string; to: string }): Promise<DecisionReplay> {
  const { calls, undecided } = recordedCalls(events);
  const result: DecisionReplay = { calls: calls.length, undecided, changed: [], otherRule: [] };
  for (const recorded of calls) {
    // A hook's verdict or an interrupt is not the guard's to judge again.
    if (recorded.then.scope === 'hook' || recorded.then.rule === 'run.interrupted') {
      result.undecided += 1;
      result.calls -= 1;
      continue;
    }
    const input = rebase ? rebasePaths(recorded.input, rebase.from, rebase.to) : recorded.input;
    // Judged as a run judges it: a call that does not fit its tool never reaches the guard.
    const { decision } = (await judgeCall(guard, recorded.tool, input)).verdict;
    if (decision.effect === recorded.then.effect && decision.rule === recorded.then.rule) continue;
    const change: DecisionChange = {
      step: recorded.step,
      id: recorded.id,
      tool: recorded.tool,
      call: describeCall(recorded.tool, recorded.input, 60),
      input: recorded.input,
      then: recorded.then,
      now: { effect: decision.effect, rule: decision.rule, scope: decision.scope, reason: decision.reason },
    };
    (decision.effect === recorded.then.effect ? result.otherRule : result.changed).push(change);
  }
  return result;
}

/** Every string in `value` with the `from` directory (and paths below it) moved to `to`. */
function rebasePaths(value: unknown, from: string, to: string): unknown {
  if (typeof value === 'string') return value.split(from).join(to);
  if (Array.isArray(value)) return value.map((v) => rebasePaths(v, from, to));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rebasePaths(v, from, to)]));
  return value;
}
