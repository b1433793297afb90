import { describe, expect, it } from 'vitest';
import { BudgetMeter } from '../../src/agent/budget.js';
import { agentLoop, type CheckRound, type LoopAnswer, type LoopOptions, type LoopOutcome, type StopAnswer, type ToolOutput, type ToolUse } from '../../src/agent/loop.js';
import { ModelApiError, type MessageParam, type Model, type ModelTurn } from '../../src/agent/model.js';
import { type TurnBlock } from '../../src/trace/records.js';
import type { RunEvent } from '../../src/trace/events.js';

const USAGE = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };

function turn(content: TurnBlock[], stopReason?: string): ModelTurn {
  return { content, stopReason: stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'), usage: USAGE, model: 'fake' };
}

/** A model that answers from a list and records what it was sent. */
function scripted(turns: (ModelTurn | Error)[]): Model & { seen: MessageParam[][] } {
  const seen: MessageParam[][] = [];
  return {
    id: 'fake',
    seen,
    async complete(request) {
      seen.push(structuredClone(request.messages));
      const next = turns.shift();
      if (!next) throw new Error('script ran out');
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

/** What a run would answer the loop's requests with, as plain functions for a test to script. */
interface Answers {
  runToolCall(use: ToolUse, step: number, signal: AbortSignal): Promise<ToolOutput>;
  runChecks(round: number, signal: AbortSignal): Promise<CheckRound>;
  stopHooks?(active: boolean, signal: AbortSignal): Promise<StopAnswer>;
  blocked?(): string | null;
}

type TestOptions = LoopOptions & Answers;

/** Drives the loop as a run does: each request answered in turn, until the outcome. */
async function runAgentLoop(options: TestOptions): Promise<LoopOutcome> {
  const loop = agentLoop(options);
  let next = await loop.next();
  while (!next.done) {
    const request = next.value;
    let answer: LoopAnswer;
    if (request.kind === 'tool') {
      const output = await options.runToolCall(request.use, request.step, request.signal);
      const blocked = options.blocked?.();
      answer = blocked ? { output, blocked } : { output };
    } else if (request.kind === 'stop') answer = options.stopHooks ? await options.stopHooks(request.active, request.signal) : { blocked: false, reason: '' };
    else answer = await options.runChecks(request.round, request.signal);
    next = await loop.next(answer);
  }
  return next.value;
}

function options(model: Model, overrides: Partial<TestOptions> = {}): TestOptions & { events: RunEvent[]; calls: ToolUse[] } {
  const events: RunEvent[] = [];
  const calls: ToolUse[] = [];
  return {
    events,
    calls,
    model,
    system: 'sys',
    taskMessage: 'do it',
    tools: [],
    meter: new BudgetMeter({ steps: 10, tokens: 1_000_000, minutes: 5 }, Date.now(), Date.now),
    maxTokens: 1000,
    checkRounds: 2,
    interrupt: new AbortController().signal,
    emit: (e) => events.push(e),
    prices: {},
    runToolCall: async (use) => {
      calls.push(use);
      return use.name === 'Broken' ? { content: 'no such tool', isError: true } : { content: `ran ${use.name}`, isError: false };
    },
    runChecks: async () => ({ passed: true, feedback: '' }),
    ...overrides,
  };
}

describe('runAgentLoop', () => {
  it('sends tool results back in order, as is_error where a call failed, and goes on', async () => {
    const model = scripted([
      turn([
        { type: 'tool_use', id: 'a', name: 'Broken', input: {} },
        { type: 'tool_use', id: 'b', name: 'Read', input: { file_path: 'x' } },
      ]),
      turn([{ type: 'text', text: 'done\nQUEUE: later' }]),
    ]);
    const outcome = await runAgentLoop(options(model));
    expect(outcome).toEqual({ kind: 'finished', finalText: 'done\nQUEUE: later' });
    const results = model.seen[1]!.at(-1)!.content as { tool_use_id: string; is_error: boolean; content: string }[];
    expect(results.map((r) => [r.tool_use_id, r.is_error, r.content])).toEqual([
      ['a', true, 'no such tool'],
      ['b', false, 'ran Read'],
    ]);
  });

  it('sends failing checks back as the next user message at most checkRounds times', async () => {
    const model = scripted([turn([{ type: 'text', text: 'done 1' }]), turn([{ type: 'text', text: 'done 2' }]), turn([{ type: 'text', text: 'done 3' }])]);
    let runs = 0;
    const outcome = await runAgentLoop(
      options(model, {
        runChecks: async () => {
          runs += 1;
          return { passed: false, feedback: `checks failed ${runs}` };
        },
      }),
    );
    expect(outcome).toEqual({ kind: 'checks_failed', finalText: 'done 3', rounds: 3 });
    expect(runs).toBe(3);
    expect(model.seen[1]!.at(-1)).toEqual({ role: 'user', content: 'checks failed 1' });
    expect(model.seen[2]!.at(-1)).toEqual({ role: 'user', content: 'checks failed 2' });
  });

  it('stops before a model call once the step budget is used', async () => {
    const tool = (id: string) => turn([{ type: 'tool_use', id, name: 'Read', input: {} }]);
    const model = scripted([tool('1'), tool('2'), tool('3')]);
    const opts = options(model, { meter: new BudgetMeter({ steps: 2, tokens: 1_000_000, minutes: 5 }, Date.now(), Date.now) });
    const outcome = await runAgentLoop(opts);
    expect(outcome).toMatchObject({ kind: 'budget_exhausted', exceeded: { which: 'steps' } });
    expect(model.seen).toHaveLength(2);
  });

  it('gives every stop_reason a defined transition', async () => {
    const refused = await runAgentLoop(options(scripted([turn([{ type: 'text', text: 'no' }], 'refusal')])));
    expect(refused.kind).toBe('refused');

    const cut = scripted([turn([{ type: 'text', text: 'part' }], 'max_tokens'), turn([{ type: 'text', text: 'rest' }])]);
    expect((await runAgentLoop(options(cut))).kind).toBe('finished');
    expect(cut.seen[1]!.at(-1)).toMatchObject({ role: 'user', content: expect.stringContaining('cut off') });

    const paused = scripted([turn([{ type: 'text', text: 'thinking' }], 'pause_turn'), turn([{ type: 'text', text: 'ok' }])]);
    expect((await runAgentLoop(options(paused))).kind).toBe('finished');
    expect(paused.seen[1]!.at(-1)).toMatchObject({ role: 'assistant' });

    const full = await runAgentLoop(options(scripted([turn([], 'model_context_window_exceeded')])));
    expect(full.kind).toBe('model_error');

    const odd = await runAgentLoop(options(scripted([turn([{ type: 'text', text: '?' }], 'something_new')])));
    expect(odd).toMatchObject({ kind: 'model_error', message: expect.stringContaining('something_new') });
  });

  it('answers a tool call cut by max_tokens as is_error without running it, and runs the complete ones before it', async () => {
    const model = scripted([
      turn(
        [
          { type: 'tool_use', id: 'whole', name: 'Read', input: { file_path: 'x' } },
          { type: 'tool_use', id: 'cut', name: 'Write', input: { file_path: 'y', content: 'half a fi' } },
        ],
        'max_tokens',
      ),
      turn([{ type: 'text', text: 'done' }]),
    ]);
    const opts = options(model);
    expect((await runAgentLoop(opts)).kind).toBe('finished');
    expect(opts.calls.map((c) => c.id)).toEqual(['whole']);
    const results = model.seen[1]!.at(-1)!.content as { tool_use_id: string; is_error: boolean; content: string }[];
    expect(results.map((r) => [r.tool_use_id, r.is_error])).toEqual([
      ['whole', false],
      ['cut', true],
    ]);
    expect(results[1]!.content).toMatch(/cut off at the output token limit.*not run/);
  });

  it('turns a ModelApiError into model_error and lets other errors through as bugs', async () => {
    const failed = await runAgentLoop(options(scripted([new ModelApiError('Anthropic API 529 overloaded')])));
    expect(failed).toMatchObject({ kind: 'model_error', message: 'Anthropic API 529 overloaded' });
    await expect(runAgentLoop(options(scripted([new TypeError('bug')])))).rejects.toThrow('bug');
  });

  it('says when the first request is on its way: when the model says so, or when the turn of a model that does not say comes', async () => {
    // The model tells: the loop passes its callback on, for the first request only.
    const told: string[] = [];
    const sentBy: ((() => void) | undefined)[] = [];
    const telling: Model = {
      id: 'fake',
      async complete(request) {
        sentBy.push(request.onSent);
        request.onSent?.();
        told.push(`answered ${sentBy.length}`);
        return sentBy.length === 1 ? turn([{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'true' } }]) : turn([{ type: 'text', text: 'done' }]);
      },
    };
    await runAgentLoop(options(telling, { onFirstRequestSent: () => told.push('sent') }));
    expect(told).toEqual(['sent', 'answered 1', 'answered 2']);
    expect(sentBy[0]).toBeTypeOf('function');
    expect(sentBy[1]).toBeUndefined();
    // A model that sends nothing (a replay) never calls it: the turn is when.
    const silent: string[] = [];
    await runAgentLoop(options(scripted([turn([{ type: 'text', text: 'done' }])]), { onFirstRequestSent: () => silent.push('sent') }));
    expect(silent).toEqual(['sent']);
    // A request that failed without the model saying it went out (the API unreachable) was
    // not sent: the run needs no workspace for it.
    const failed: string[] = [];
    const outcome = await runAgentLoop(options(scripted([new ModelApiError('Anthropic API unreachable')]), { onFirstRequestSent: () => failed.push('sent') }));
    expect(outcome.kind).toBe('model_error');
    expect(failed).toEqual([]);
  });

  it('ends as interrupted when the interrupt signal fires during a tool call', async () => {
    const controller = new AbortController();
    const model = scripted([turn([{ type: 'tool_use', id: 'a', name: 'Bash', input: {} }]), turn([{ type: 'text', text: 'never' }])]);
    const outcome = await runAgentLoop(
      options(model, {
        interrupt: controller.signal,
        runToolCall: async (_use, _step, signal) => {
          controller.abort();
          expect(signal.aborted).toBe(true);
          return { content: 'killed', isError: true };
        },
      }),
    );
    expect(outcome.kind).toBe('interrupted');
    expect(model.seen).toHaveLength(1);
  });
});
