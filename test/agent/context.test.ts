import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { BudgetMeter } from '../../src/agent/budget.js';
import { CLEARED_MARK, clearOldToolResults, compactConversation, conversationProblem } from '../../src/agent/context-edit.js';
import { ContextKeeper } from '../../src/agent/context-keeper.js';
import { ContextLedger } from '../../src/agent/context-summary.js';
import { contextThresholds, contextWindowOf } from '../../src/agent/context-window.js';
import { agentLoop, type LoopOutcome } from '../../src/agent/loop.js';
import type { MessageParam, Model, ModelRequest } from '../../src/agent/model.js';
import { createReplayModel } from '../../src/agent/replay-model.js';
import type { RunEvent } from '../../src/trace/events.js';

type Result = { type: 'tool_result'; tool_use_id: string; content: string; is_error: boolean };

/** A conversation of `turns` tool turns, each one call with `size` bytes of output. */
function conversation(turns: number, size = 1000, last: 'results' | 'text' = 'results'): MessageParam[] {
  const messages: MessageParam[] = [{ role: 'user', content: 'the task' }];
  for (let i = 1; i <= turns; i++) {
    messages.push({ role: 'assistant', content: [{ type: 'text', text: `turn ${i}` }, { type: 'tool_use', id: `t${i}`, name: i % 2 ? 'Bash' : 'Read', input: { command: `step ${i}` } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${i}`, content: `${i}:`.padEnd(size, 'x'), is_error: false }] });
  }
  if (last === 'text') messages.push({ role: 'assistant', content: [{ type: 'text', text: 'done' }] });
  return messages;
}

function results(messages: readonly MessageParam[]): Result[] {
  return messages.flatMap((m) => (typeof m.content === 'string' ? [] : (m.content.filter((b) => b.type === 'tool_result') as Result[])));
}

describe('clearOldToolResults', () => {
  it('clears all but the newest seen results, keeps every block and id, never the unseen last message, and leaves its input alone', () => {
    const messages = conversation(6);
    const before = JSON.stringify(messages);
    const cleared = clearOldToolResults(messages, 2);
    expect(JSON.stringify(messages)).toBe(before);
    expect(cleared.results).toBe(3);
    const after = results(cleared.messages);
    expect(after.map((r) => r.tool_use_id)).toEqual(['t1', 't2', 't3', 't4', 't5', 't6']);
    expect(after.map((r) => r.content.startsWith(CLEARED_MARK))).toEqual([true, true, true, false, false, false]);
    expect(after[0]!.content).toContain('1000 bytes of Bash output');
    expect(after[1]!.content).toContain('Read output');
    expect(after[0]!.content).toMatch(/Make the call again/);
    expect(conversationProblem(cleared.messages)).toBeNull();
    // Unchanged messages are shared, changed ones are new objects.
    expect(cleared.messages[1]).toBe(messages[1]);
    expect(cleared.messages[2]).not.toBe(messages[2]);
  });

  it('is idempotent, and hands back the same array when there is nothing to clear', () => {
    const once = clearOldToolResults(conversation(6), 1).messages;
    const twice = clearOldToolResults(once, 1);
    expect(twice.results).toBe(0);
    expect(twice.messages).toBe(once);
    const small = conversation(6, 20);
    expect(clearOldToolResults(small, 0).messages).toBe(small);
  });

  it('with keep 0 clears every result the model has seen, and none it has not', () => {
    const seenAll = clearOldToolResults(conversation(3, 1000, 'text'), 0);
    expect(seenAll.results).toBe(3);
    const unseen = clearOldToolResults(conversation(3), 0);
    expect(results(unseen.messages).map((r) => r.content.startsWith(CLEARED_MARK))).toEqual([true, true, false]);
  });
});

describe('compactConversation', () => {
  const summary = (turns: number) => `summary of ${turns} turns`;

  it('keeps the newest whole turns after one summary message, in an order the API accepts', () => {
    const messages = conversation(10, 1000);
    const compacted = compactConversation(messages, { summary, keepBytes: 2600, keepTurns: 6 })!;
    expect(compacted.turns).toBe(8);
    expect(compacted.messages[0]).toEqual({ role: 'user', content: 'summary of 8 turns' });
    expect(compacted.messages.slice(1)).toEqual(messages.slice(-4));
    expect(conversationProblem(compacted.messages)).toBeNull();
  });

  it('keeps at most keepTurns, and always the newest turn however large', () => {
    expect(compactConversation(conversation(10, 10), { summary, keepBytes: 1e9, keepTurns: 3 })!.turns).toBe(7);
    const huge = compactConversation(conversation(4, 50_000), { summary, keepBytes: 0, keepTurns: 6 })!;
    expect(huge.turns).toBe(3);
    expect(results(huge.messages).map((r) => r.tool_use_id)).toEqual(['t4']);
    expect(conversationProblem(huge.messages)).toBeNull();
  });

  it('ends on an assistant turn or on check feedback alike, and is idempotent', () => {
    const messages = [...conversation(5, 100, 'text'), { role: 'user' as const, content: 'checks failed: ...' }];
    const once = compactConversation(messages, { summary, keepBytes: 500, keepTurns: 2 })!;
    expect(conversationProblem(once.messages)).toBeNull();
    expect(once.messages.at(-1)).toEqual({ role: 'user', content: 'checks failed: ...' });
    // Compacting what was compacted, the same way, drops nothing more.
    expect(compactConversation(once.messages, { summary, keepBytes: 500, keepTurns: 2 })).toBeNull();
  });

  it('is null for a conversation of one turn', () => {
    expect(compactConversation(conversation(1, 100_000), { summary, keepBytes: 0, keepTurns: 6 })).toBeNull();
    expect(compactConversation([{ role: 'user', content: 'task' }], { summary, keepBytes: 0, keepTurns: 6 })).toBeNull();
  });
});

describe('conversationProblem', () => {
  it('finds a result without its call, a call without its result, and two user messages in a row', () => {
    const messages = conversation(2);
    expect(conversationProblem(messages.slice(1))).toMatch(/does not start with a user message/);
    const stray = { role: 'user' as const, content: [...results([messages[2]!]), { type: 'tool_result' as const, tool_use_id: 'tX', content: 'x' }] };
    expect(conversationProblem([messages[0]!, messages[1]!, stray])).toMatch(/answers tX, which the message before it did not call/);
    expect(conversationProblem([...messages.slice(0, 2), { role: 'user', content: 'x' }])).toMatch(/t1 of message 1 is not answered/);
    expect(conversationProblem([messages[0]!, { role: 'user', content: 'x' }])).toMatch(/both from the user/);
  });
});

describe('ContextLedger', () => {
  it('keeps the task, each call with its verdict, rule and status, the files read and written, check feedback and the last words', () => {
    const ledger = new ContextLedger('Fix the fee calculation in src/fees.js');
    ledger.call({ step: 1, tool: 'Read', input: { file_path: 'src/fees.js' }, verdict: { effect: 'allow', rule: 'baseline.read' }, isError: false, content: 'code' });
    ledger.call({ step: 2, tool: 'Bash', input: { command: 'npm test' }, verdict: { effect: 'allow', rule: 'allow-tests' }, isError: true, content: 'FAIL\n\nexit code 1' });
    ledger.call({ step: 2, tool: 'Write', input: { file_path: '/etc/passwd', content: 'x' }, verdict: { effect: 'deny', rule: 'baseline.outside-worktree' }, isError: true, content: 'This call was denied' });
    ledger.call({ step: 3, tool: 'Edit', input: { file_path: 'src/fees.js', old_string: 'a', new_string: 'b' }, verdict: { effect: 'ask', rule: 'ask-edits', approved: true }, isError: false, content: 'ok' });
    ledger.call({ step: 3, tool: 'Write', input: { file_path: 'src/cut.js', content: 'x' }, notRun: true, isError: true, content: 'cut' });
    ledger.checksFailed('check `node --test` failed: 2 tests');
    ledger.said('I changed the rounding.');
    const summary = ledger.summary(7);
    expect(summary).toContain('the first 7 of your turns');
    expect(summary).toContain('Fix the fee calculation in src/fees.js');
    expect(summary).toContain('step 1: Read(src/fees.js) — allowed (baseline.read) — ok');
    expect(summary).toContain('step 2: Bash(npm test) — allowed (allow-tests) — error: exit code 1');
    expect(summary).toContain('step 2: Write(/etc/passwd) — denied (baseline.outside-worktree)');
    expect(summary).toContain('step 3: Edit(src/fees.js) — approved on ask (ask-edits) — ok');
    expect(summary).toContain('Write(src/cut.js) — not run (cut at the output limit)');
    expect(summary).toContain('read: src/fees.js');
    expect(summary).toContain('written or edited: src/fees.js');
    expect(summary).not.toContain('/etc/passwd,');
    expect(summary).toContain('check `node --test` failed: 2 tests');
    expect(summary).toContain('I changed the rounding.');
    expect(summary).toContain('5 (Read 1, Bash 1, Write 2, Edit 1), 2 not run');
    // The same record, the same summary: it is made, not written by a model.
    expect(ledger.summary(7)).toBe(summary);
  });

  it('stays bounded however many calls a run makes', () => {
    const ledger = new ContextLedger('task');
    for (let i = 0; i < 5000; i++) ledger.call({ step: i, tool: 'Bash', input: { command: `echo ${'y'.repeat(500)} ${i}` }, isError: false, content: '' });
    ledger.said('z'.repeat(100_000));
    const summary = ledger.summary(5000);
    expect(summary.length).toBeLessThan(20_000);
    expect(summary).toContain('step 4999:');
    expect(summary).toContain('the 4940 before these are counted above only');
  });
});

describe('contextWindowOf and the thresholds', () => {
  it('knows Claude models, takes a ticket value over it, and defaults to 200k', () => {
    expect(contextWindowOf('claude-sonnet-4-5')).toBe(200_000);
    expect(contextWindowOf('replay:/x.yaml')).toBe(200_000);
    expect(contextWindowOf('some-other-model')).toBe(200_000);
    expect(contextWindowOf('claude-sonnet-4-5', 50_000)).toBe(50_000);
    const t = contextThresholds(200_000, 8192);
    expect(t.editTo).toBeLessThan(t.editAt);
    expect(t.editAt + 8192).toBeLessThan(200_000);
  });
});

describe('ContextKeeper', () => {
  it('never makes a conversation larger, whatever the window: a summary longer than what it replaces is not used', () => {
    for (const window of [1024, 4096, 32_768]) {
      for (const [turns, size] of [[2, 10], [3, 50], [8, 400], [20, 3000]] as const) {
        const events: RunEvent[] = [];
        const keeper = new ContextKeeper({ modelId: 'claude-x', system: 's'.repeat(2000), tools: [], maxTokens: 8192, task: 't'.repeat(3000), settings: { window, keepToolResults: 1 }, emit: (e) => events.push(e) });
        const messages = conversation(turns, size);
        const fitted = keeper.fit(messages, turns + 1);
        expect(JSON.stringify(fitted).length, `window ${window}, ${turns} turns of ${size}`).toBeLessThanOrEqual(JSON.stringify(messages).length);
        expect(conversationProblem(fitted)).toBeNull();
        for (const e of events) if (e.type === 'context_cleared' || e.type === 'context_compacted') expect(e.bytesAfter).toBeLessThan(e.bytesBefore);
      }
    }
  });

  it('estimates from the usage the API reported plus what was added since, never below the bytes', () => {
    const keeper = new ContextKeeper({ modelId: 'claude-x', system: '', tools: [], maxTokens: 1000, task: 't', emit: () => undefined });
    const base = keeper.estimate(4000);
    expect(base).toBeGreaterThanOrEqual(1000);
    keeper.answered({ inputTokens: 100, outputTokens: 10, cacheReadTokens: 50_000, cacheWriteTokens: 900 }, 4000);
    expect(keeper.estimate(8000)).toBe(51_000 + 1000);
    // A stand-in that reports nothing cannot hide the conversation.
    keeper.answered({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }, 8000);
    expect(keeper.estimate(400_000)).toBeGreaterThanOrEqual(100_000);
  });
});

/** A model that answers every request with one Bash call, reporting usage as bytes / 4, and checks each request. */
function toolLoopModel(steps: number): Model & { requests: { bytes: number; problem: string | null; compactedTurns: number }[] } {
  const requests: { bytes: number; problem: string | null; compactedTurns: number }[] = [];
  let n = 0;
  return {
    id: 'claude-test',
    requests,
    async complete(request: ModelRequest) {
      n += 1;
      const bytes = JSON.stringify(request.messages).length;
      requests.push({ bytes, problem: conversationProblem(request.messages), compactedTurns: request.compactedTurns ?? 0 });
      const content = n < steps ? [{ type: 'tool_use' as const, id: `toolu_${n}`, name: n % 3 ? 'Bash' : 'Read', input: n % 3 ? { command: `step ${n}` } : { file_path: `src/f${n % 50}.ts` } }] : [{ type: 'text' as const, text: 'all done' }];
      return { content, stopReason: n < steps ? 'tool_use' : 'end_turn', usage: { inputTokens: Math.ceil(bytes / 4), outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 }, model: 'claude-test' };
    },
  };
}

async function drive(model: Model, steps: number, output: (step: number) => string, context: { window?: number; keepToolResults?: number }): Promise<{ outcome: LoopOutcome; events: RunEvent[] }> {
  const events: RunEvent[] = [];
  const loop = agentLoop({
    model,
    system: 'system prompt',
    taskMessage: 'the task: keep going',
    tools: [],
    meter: new BudgetMeter({ steps: steps + 5, tokens: 1e12, minutes: 30 }, Date.now(), Date.now),
    maxTokens: 4096,
    checkRounds: 1,
    interrupt: new AbortController().signal,
    emit: (event) => events.push(event),
    prices: {},
    context,
  });
  let next = await loop.next();
  while (!next.done) {
    const request = next.value;
    if (request.kind === 'tool') next = await loop.next({ output: { content: output(request.step), isError: false, verdict: { effect: 'allow', rule: 'r' } } });
    else if (request.kind === 'stop') next = await loop.next({ blocked: false, reason: '' });
    else next = await loop.next({ passed: true, feedback: '' });
  }
  return { outcome: next.value, events };
}

describe('the loop keeps its conversation within the window', () => {
  it('over 1,000 steps: every request valid and under the window, context events in order, the run finished', async () => {
    const model = toolLoopModel(1000);
    const { outcome, events } = await drive(model, 1000, (step) => `output of step ${step} `.repeat(step % 10 === 0 ? 2000 : 20), { window: 32_768, keepToolResults: 3 });
    expect(outcome).toEqual({ kind: 'finished', finalText: 'all done' });
    expect(model.requests).toHaveLength(1000);
    for (const request of model.requests) {
      expect(request.problem).toBeNull();
      expect(request.bytes / 4).toBeLessThan(32_768 - 4096);
    }
    const cleared = events.filter((e) => e.type === 'context_cleared');
    const compacted = events.filter((e) => e.type === 'context_compacted');
    expect(cleared.length).toBeGreaterThan(0);
    expect(compacted.length).toBeGreaterThan(0);
    for (const e of compacted) {
      expect(e.bytesAfter).toBeLessThan(e.bytesBefore);
      expect(e.summary).toContain('the task: keep going');
    }
    // The turns dropped are counted for the model (a replay script plays on from them).
    const dropped = compacted.reduce((sum, e) => sum + e.turns, 0);
    expect(model.requests.at(-1)!.compactedTurns).toBe(dropped);
    // The conversation at 1,000 steps is no larger than at 200.
    const largest = (from: number, to: number) => Math.max(...model.requests.slice(from, to).map((r) => r.bytes));
    expect(largest(900, 1000)).toBeLessThanOrEqual(largest(100, 200) * 1.2);
  });

  it('a replay script plays every turn once, in order, across compactions', async () => {
    const turns = Array.from({ length: 40 }, (_, i) => ({ content: [{ type: 'tool_use' as const, id: `toolu_replay_${i}_0`, name: 'Bash', input: { command: `echo ${i}` } }] }));
    turns.push({ content: [{ type: 'text' as const, text: 'finished at the last turn' }] as never });
    const model = createReplayModel('replay:script.yaml', { source: 'script', turns });
    const { outcome, events } = await drive(model, 41, () => 'z'.repeat(20_000), { window: 32_768, keepToolResults: 1 });
    expect(outcome).toEqual({ kind: 'finished', finalText: 'finished at the last turn' });
    const commands = events.flatMap((e) => (e.type === 'model_response' ? e.content.flatMap((b) => (b.type === 'tool_use' ? [(b.input as { command: string }).command] : [])) : []));
    expect(commands).toEqual(Array.from({ length: 40 }, (_, i) => `echo ${i}`));
    expect(events.some((e) => e.type === 'context_compacted')).toBe(true);
  });

  it('lets go of what it cleared and compacted: the old messages are garbage while the run goes on', async () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const early: WeakRef<object>[] = [];
    let alive = -1;
    const inner = toolLoopModel(60);
    const model: Model = {
      id: inner.id,
      async complete(request) {
        // The messages carrying the first results, as the model was sent them.
        if (early.length < 5) for (const message of request.messages) if (message.role === 'user' && typeof message.content !== 'string') early.push(new WeakRef(message));
        if (inner.requests.length === 50) {
          // A WeakRef keeps its target until the job that made it ends: let the event loop turn.
          await new Promise((resolve) => setImmediate(resolve));
          gc();
          alive = early.filter((ref) => ref.deref() !== undefined).length;
        }
        return inner.complete(request);
      },
    };
    const { events } = await drive(model, 60, () => 'q'.repeat(30_000), { window: 32_768, keepToolResults: 1 });
    expect(events.some((e) => e.type === 'context_compacted')).toBe(true);
    expect(early.length).toBeGreaterThan(0);
    expect(alive).toBe(0);
  });
});
