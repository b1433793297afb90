import type { EmitEvent } from '../trace/events.js';
import type { BudgetExceeded, BudgetMeter } from './budget.js';
import { createJsonSizer } from './json-size.js';
import { ModelApiError, type MessageParam, type Model, type ModelTurn, type ToolSpec } from './model.js';
import { type TokenUsage } from '../trace/records.js';

/** What a tool call gives back to the model. */
export interface ToolOutput {
  content: string;
  isError: boolean;
}

export interface ToolUse {
  id: string;
  name: string;
  input: unknown;
}

export interface CheckRound {
  passed: boolean;
  /** What goes back to the model when the checks failed. */
  feedback: string;
}

export interface LoopOptions {
  model: Model;
  system: string;
  taskMessage: string;
  tools: ToolSpec[];
  meter: BudgetMeter;
  maxTokens: number;
  /** How many times failing checks go back to the model. */
  checkRounds: number;
  /** Aborted when the user interrupts the run. */
  interrupt: AbortSignal;
  emit: EmitEvent;
  priceTurn(usage: TokenUsage): number | null;
  /** Parses, guards and runs one call; never throws for what the model can recover from. */
  runToolCall(use: ToolUse, step: number, signal: AbortSignal): Promise<ToolOutput>;
  runChecks(round: number, signal: AbortSignal): Promise<CheckRound>;
  /**
   * Stop hooks, when the model ends its turn and before the checks. `active` is true when
   * the previous stop was blocked by a hook, which may then not block again.
   */
  stopHooks?(active: boolean, signal: AbortSignal): Promise<{ blocked: boolean; reason: string }>;
  /** Called once per turn after its tool calls: why policy has stopped the run, or null to go on. */
  blocked?(): string | null;
}

export type LoopOutcome =
  | { kind: 'finished'; finalText: string }
  | { kind: 'checks_failed'; finalText: string; rounds: number }
  | { kind: 'budget_exhausted'; exceeded: BudgetExceeded; finalText: string }
  | { kind: 'refused'; finalText: string }
  | { kind: 'blocked'; reason: string; finalText: string }
  | { kind: 'model_error'; message: string; finalText: string }
  | { kind: 'interrupted'; finalText: string };

const CUT_CALL: ToolOutput = {
  content:
    'This call was cut off at the output token limit, so its input may be incomplete; it was not run. ' +
    'Send it again, in smaller pieces if it is large (for example a Write of part of the file, then Edits).',
  isError: true,
};

/**
 * The agent loop: model turn, tool calls, repeat; when the model ends its turn the checks
 * run and failures go back to it a bounded number of times. Limits are checked before
 * every model call, and every path ends in an explicit outcome.
 */
export async function runAgentLoop(options: LoopOptions): Promise<LoopOutcome> {
  const { model, meter, emit } = options;
  const remainingMs = Math.max(0, meter.budget.minutes * 60_000 - meter.elapsedMs());
  const deadline = AbortSignal.timeout(remainingMs);
  const signal = AbortSignal.any([options.interrupt, deadline]);
  const messages: MessageParam[] = [{ role: 'user', content: options.taskMessage }];
  let finalText = '';
  let failedRounds = 0;
  let stopHookActive = false;
  // The size of the conversation sent, for the trace, without serialising it every turn.
  const conversationBytes = createJsonSizer();

  const stopped = (): LoopOutcome | null => {
    if (options.interrupt.aborted) return { kind: 'interrupted', finalText };
    if (deadline.aborted) return { kind: 'budget_exhausted', exceeded: { which: 'minutes', detail: `${meter.budget.minutes} minute limit reached` }, finalText };
    return null;
  };

  for (;;) {
    const early = stopped();
    if (early) return early;
    const exceeded = meter.exceeded();
    if (exceeded) return { kind: 'budget_exhausted', exceeded, finalText };

    const step = meter.steps + 1;
    emit({ type: 'model_request', step, messages: messages.length, bytes: conversationBytes(messages) });
    const started = Date.now();
    let turn: ModelTurn;
    try {
      turn = await model.complete({ system: options.system, messages, tools: options.tools, maxTokens: options.maxTokens, signal });
    } catch (error) {
      const halted = stopped();
      if (halted) return halted;
      if (error instanceof ModelApiError) return { kind: 'model_error', message: error.message, finalText };
      throw error;
    }
    meter.record(turn.usage, options.priceTurn(turn.usage));
    emit({ type: 'model_response', step, stopReason: turn.stopReason, usage: turn.usage, content: turn.content, durationMs: Date.now() - started });

    const text = turn.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim();
    if (text) finalText = text;
    const uses = turn.content.flatMap((b) => (b.type === 'tool_use' ? [{ id: b.id, name: b.name, input: b.input }] : []));
    if (turn.content.length > 0) messages.push({ role: 'assistant', content: turn.content });

    if (turn.stopReason === 'refusal') return { kind: 'refused', finalText };
    if (turn.stopReason === 'model_context_window_exceeded') {
      return { kind: 'model_error', message: 'the conversation no longer fits the model context window', finalText };
    }

    if (uses.length > 0) {
      // A turn cut at the output limit inside a tool call leaves that call's input cut too
      // (a Write of half a file): it is answered, never run.
      const last = turn.content.at(-1);
      const cutId = turn.stopReason === 'max_tokens' && last?.type === 'tool_use' ? last.id : undefined;
      const results = [];
      for (const use of uses) {
        const output = use.id === cutId ? CUT_CALL : await options.runToolCall(use, step, signal);
        results.push({ type: 'tool_result' as const, tool_use_id: use.id, content: output.content || '(no output)', is_error: output.isError });
        const halted = stopped();
        if (halted) return halted;
        // Checked after every call, so one long turn cannot go on past the limit.
        const blocked = options.blocked?.();
        if (blocked) return { kind: 'blocked', reason: blocked, finalText };
      }
      messages.push({ role: 'user', content: results });
      continue;
    }

    switch (turn.stopReason) {
      case 'pause_turn':
        // The API paused a long turn; sending the conversation back lets it continue.
        if (turn.content.length === 0) messages.push({ role: 'user', content: 'Continue.' });
        continue;
      case 'max_tokens':
        messages.push({ role: 'user', content: 'Your reply was cut off at the output token limit. Continue where you stopped.' });
        continue;
      case 'end_turn':
      case 'stop_sequence':
        break;
      default:
        return { kind: 'model_error', message: `the model stopped with an unknown stop_reason "${turn.stopReason}"`, finalText };
    }

    // The API rejects an empty assistant turn, and check feedback must follow one.
    if (turn.content.length === 0) messages.push({ role: 'assistant', content: '(no reply)' });
    if (options.stopHooks) {
      const stop = await options.stopHooks(stopHookActive, signal);
      const halted = stopped();
      if (halted) return halted;
      // At most once in a row: a stop that follows a blocked one goes on to the checks.
      if (stop.blocked && !stopHookActive) {
        stopHookActive = true;
        messages.push({ role: 'user', content: stop.reason });
        continue;
      }
    }
    stopHookActive = false;
    const round = await options.runChecks(failedRounds + 1, signal);
    const halted = stopped();
    if (halted) return halted;
    if (round.passed) return { kind: 'finished', finalText };
    failedRounds += 1;
    if (failedRounds > options.checkRounds) return { kind: 'checks_failed', finalText, rounds: failedRounds };
    messages.push({ role: 'user', content: round.feedback });
  }
}
