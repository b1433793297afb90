import { costUsd as priceTurn, type PriceTable } from '../config/prices.js';
import { isReplayModel } from '../ticket/model-id.js';
import type { Outcome } from '../trace/outcome.js';
import type { EmitEvent } from '../trace/events.js';
import type { BudgetMeter } from './budget.js';
import { ContextKeeper, type ContextSettings } from './context-keeper.js';
import type { CallVerdict } from './context-summary.js';
import { ModelApiError, type MessageParam, type Model, type ModelTurn, type ToolSpec } from './model.js';

/** What a tool call gives back to the model. */
export interface ToolOutput {
  content: string;
  isError: boolean;
  /** The guard's verdict on the call, for the record a compacted conversation keeps. */
  verdict?: CallVerdict;
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
  /** Prices from config, beside the ones corral knows; a turn that cannot be priced makes the cost unknown. */
  prices: PriceTable;
  /** The ticket's `context`: the window and how many tool results stay whole (defaults otherwise). */
  context?: ContextSettings;
  /** Called once, when the first request is on its way (or, for a model that does not say, when its turn comes). */
  onFirstRequestSent?: () => void;
}

/**
 * What the loop needs done by whoever drives it; each is answered by passing the answer
 * to the generator's `next`. `signal` ends with the run's interrupt or its minute budget.
 */
export type LoopRequest =
  /** Judge and run one call; answered with a ToolAnswer. */
  | { kind: 'tool'; use: ToolUse; step: number; signal: AbortSignal }
  /**
   * The model ended its turn: run the Stop hooks before the checks; answered with a
   * StopAnswer. `active` is true when the previous stop was blocked by a hook, which may
   * then not block again.
   */
  | { kind: 'stop'; active: boolean; step: number; signal: AbortSignal }
  /** Run the checks; answered with a CheckRound. */
  | { kind: 'checks'; round: number; signal: AbortSignal };

export interface ToolAnswer {
  output: ToolOutput;
  /** Why policy has stopped the run (too many refusals in a row), if it has. */
  blocked?: string;
}

export interface StopAnswer {
  blocked: boolean;
  reason: string;
  /** A hook answered `continue: false`: the run ends, blocked, for this reason. */
  halt?: string;
}

export type LoopAnswer = ToolAnswer | StopAnswer | CheckRound;

/** The loop as its driver sees it: requests out, answers in, an outcome at the end. */
export type AgentLoop = AsyncGenerator<LoopRequest, LoopOutcome, LoopAnswer>;

/** How the loop ends: the outcomes of trace/outcome.ts that carry the agent's last words. */
export type LoopOutcome = Extract<Outcome, { finalText: string }>;

const CUT_CALL: ToolOutput = {
  content:
    'This call was cut off at the output token limit, so its input may be incomplete; it was not run. ' +
    'Send it again, in smaller pieces if it is large (for example a Write of part of the file, then Edits).',
  isError: true,
};

/**
 * The agent loop: model turn, tool calls, repeat; when the model ends its turn the checks
 * run and failures go back to it a bounded number of times. Limits are checked before
 * every model call, and every path ends in an explicit outcome. What the loop cannot do
 * itself (run a call, the hooks, the checks) it asks its driver for, by yielding a
 * request: it never calls up into the run that drives it.
 */
export async function* agentLoop(options: LoopOptions): AgentLoop {
  const { model, meter, emit } = options;
  const remainingMs = Math.max(0, meter.budget.minutes * 60_000 - meter.elapsedMs());
  const deadline = AbortSignal.timeout(remainingMs);
  const signal = AbortSignal.any([options.interrupt, deadline]);
  // Replaced, never copied, when the keeper edits it: the loop holds the only conversation.
  let messages: MessageParam[] = [{ role: 'user', content: options.taskMessage }];
  let finalText = '';
  let failedRounds = 0;
  let stopHookActive = false;
  let firstSent = options.onFirstRequestSent;
  const sayFirstSent = (): void => {
    const say = firstSent;
    firstSent = undefined;
    say?.();
  };
  // Keeps the conversation within the context window, and sizes it for the trace without
  // serialising it every turn.
  const context = new ContextKeeper({
    modelId: model.id,
    system: options.system,
    tools: options.tools,
    maxTokens: options.maxTokens,
    task: options.taskMessage,
    ...(options.context ? { settings: options.context } : {}),
    emit,
  });

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
    messages = context.fit(messages, step);
    const requestBytes = context.bytes(messages);
    emit({ type: 'model_request', step, messages: messages.length, bytes: requestBytes });
    const started = Date.now();
    let turn: ModelTurn;
    try {
      const compactedTurns = context.compactedTurns;
      turn = await model.complete({ system: options.system, messages, tools: options.tools, maxTokens: options.maxTokens, signal, ...(compactedTurns > 0 ? { compactedTurns } : {}), ...(firstSent ? { onSent: sayFirstSent } : {}) });
    } catch (error) {
      const halted = stopped();
      if (halted) return halted;
      if (error instanceof ModelApiError) return { kind: 'model_error', message: error.message, finalText };
      throw error;
    }
    // A model that sends nothing (a replay) never says so: its first turn is when.
    sayFirstSent();
    // A scripted model costs nothing.
    const costUsd = isReplayModel(model.id) ? 0 : priceTurn(model.id, turn.usage, options.prices);
    meter.record(turn.usage, costUsd);
    context.answered(turn.usage, requestBytes);
    emit({ type: 'model_response', step, stopReason: turn.stopReason, usage: turn.usage, content: turn.content, durationMs: Date.now() - started, costUsd });

    const text = turn.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim();
    if (text) {
      finalText = text;
      context.ledger.said(text);
    }
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
        const answer: ToolAnswer = use.id === cutId ? { output: CUT_CALL } : ((yield { kind: 'tool', use, step, signal }) as ToolAnswer);
        const { output } = answer;
        context.ledger.call({ step, tool: use.name, input: use.input, ...(output.verdict ? { verdict: output.verdict } : {}), ...(use.id === cutId ? { notRun: true } : {}), isError: output.isError, content: output.content });
        results.push({ type: 'tool_result' as const, tool_use_id: use.id, content: output.content || '(no output)', is_error: output.isError });
        const halted = stopped();
        if (halted) return halted;
        // Checked after every call, so one long turn cannot go on past the limit.
        if (answer.blocked) return { kind: 'blocked', reason: answer.blocked, finalText };
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
    const stop = (yield { kind: 'stop', active: stopHookActive, step, signal }) as StopAnswer;
    const afterStop = stopped();
    if (afterStop) return afterStop;
    if (stop.halt !== undefined) return { kind: 'blocked', reason: stop.halt, finalText };
    // At most once in a row: a stop that follows a blocked one goes on to the checks.
    if (stop.blocked && !stopHookActive) {
      stopHookActive = true;
      context.ledger.stopBlocked(stop.reason);
      messages.push({ role: 'user', content: stop.reason });
      continue;
    }
    stopHookActive = false;
    const round = (yield { kind: 'checks', round: failedRounds + 1, signal }) as CheckRound;
    const afterChecks = stopped();
    if (afterChecks) return afterChecks;
    if (round.passed) return { kind: 'finished', finalText };
    failedRounds += 1;
    if (failedRounds > options.checkRounds) return { kind: 'checks_failed', finalText, rounds: failedRounds };
    context.ledger.checksFailed(round.feedback);
    messages.push({ role: 'user', content: round.feedback });
  }
}
