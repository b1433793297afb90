import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/trace/events.js';
import { createRunFold, foldRun, runResultOf } from '../../src/trace/fold.js';

const usage = (n: number) => ({ inputTokens: n, outputTokens: n, cacheReadTokens: 0, cacheWriteTokens: 0 });
const START: RunEvent = { type: 'run_start', runId: 'r', ticket: { id: 't', file: 't.yaml' }, model: 'm', runDir: '/runs/r', corral: '0.1.0', configDigest: 'd' };

/** A Bash call asked about and answered as given. */
function ask(id: string, approval: { approved: boolean; by: 'person' | 'remembered' | 'unattended' | 'interrupted'; for?: 'once' | 'run' }): RunEvent[] {
  return [
    { type: 'tool_call', step: 1, id, tool: 'Bash', input: { command: `echo ${id}` } },
    { type: 'decision', step: 1, id, tool: 'Bash', effect: 'ask', rule: 'default', scope: 'default', reason: 'unknown', commands: [], paths: [] },
    { type: 'approval', step: 1, id, tool: 'Bash', rule: 'default', ...approval },
  ];
}

describe('foldRun', () => {
  it('names each ask’s answer as the run’s call records do', () => {
    const fold = foldRun([
      START,
      ...ask('a', { approved: true, by: 'person', for: 'once' }),
      ...ask('b', { approved: true, by: 'person', for: 'run' }),
      ...ask('c', { approved: true, by: 'remembered' }),
      ...ask('d', { approved: false, by: 'person' }),
      ...ask('e', { approved: false, by: 'interrupted' }),
      ...ask('f', { approved: false, by: 'unattended' }).slice(0, 2),
    ]);
    expect(fold.asked.map((a) => [a.call, a.answer])).toEqual([
      ['Bash(echo a)', 'yes'],
      ['Bash(echo b)', 'always'],
      ['Bash(echo c)', 'remembered'],
      ['Bash(echo d)', 'no'],
      ['Bash(echo e)', 'interrupted'],
      // The trace ends before the answer.
      ['Bash(echo f)', undefined],
    ]);
    expect(fold.denied).toEqual([]);
    expect(fold.toolCalls).toBe(6);
  });

  it('keeps the last round of checks, and counts the rounds', () => {
    const check = (round: number, name: string, passed: boolean): RunEvent => ({ type: 'check', round, name, passed, exitCode: passed ? 0 : 1, durationMs: 5, output: '' });
    const fold = foldRun([START, check(1, 'lint', true), check(1, 'test', false), check(2, 'lint', true), check(2, 'test', true)]);
    expect(fold.checkRoundsUsed).toBe(2);
    expect(fold.checks.map((c) => [c.name, c.passed])).toEqual([['lint', true], ['test', true]]);
  });

  it('sums cost turn by turn, unknown once one turn cannot be priced, and with no price at all', () => {
    const turn = (n: number): RunEvent => ({ type: 'model_response', step: n, stopReason: 'end_turn', usage: usage(n), content: [{ type: 'text', text: `turn ${n}` }], durationMs: 1 });
    expect(foldRun([START, turn(1), turn(2)], { price: (u) => u.inputTokens / 100 }).costUsd).toBeCloseTo(0.03);
    expect(foldRun([START, turn(1), turn(2)], { price: (u) => (u.inputTokens === 2 ? null : 1) }).costUsd).toBeNull();
    expect(foldRun([START, turn(1)]).costUsd).toBeNull();
    const fold = foldRun([START, turn(1), turn(2)]);
    expect(fold.steps).toBe(2);
    expect(fold.usage).toEqual({ inputTokens: 3, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(fold.finalText).toBe('turn 2');
  });

  it('counts a result whose call the trace lost against its tool, without inventing a call', () => {
    const fold = foldRun([START, { type: 'tool_result', step: 1, id: 'x', tool: 'Read', isError: true, bytes: 3, durationMs: 9 }]);
    expect(fold.toolCalls).toBe(0);
    expect(fold.calls).toEqual([{ id: 'x', step: 1, tool: 'Read', call: 'Read(…)', result: { isError: true, bytes: 3, durationMs: 9 } }]);
  });
});

describe('createRunFold', () => {
  it('folds as events come, and what it handed out does not change after', () => {
    const fold = createRunFold();
    fold.add(START);
    fold.add({ type: 'decision', step: 1, id: 'a', tool: 'Read', effect: 'deny', rule: 'r', scope: 'baseline', reason: 'no', commands: [], paths: [] });
    const early = fold.current();
    fold.add({ type: 'decision', step: 2, id: 'b', tool: 'Read', effect: 'deny', rule: 'r', scope: 'baseline', reason: 'no', commands: [], paths: [] });
    expect(early.denied).toHaveLength(1);
    expect(fold.current().denied).toHaveLength(2);
    expect(fold.current().lastStep).toBe(2);
  });
});

describe('runResultOf', () => {
  it('needs the run’s start and end', () => {
    expect(() => runResultOf(foldRun([]))).toThrow(/run_start/);
    expect(() => runResultOf(foldRun([START]))).toThrow(/its end event/);
  });

  it('takes every fact from the events: checks, the files kept, the duration, the warnings', () => {
    const result = runResultOf(
      foldRun([
        { ...START, trace: '/runs/r/trace.jsonl', baseCommit: 'abc' },
        { type: 'check', round: 1, name: 'test', command: 'npm test', timedOut: true, passed: false, exitCode: null, durationMs: 5, output: '' },
        { type: 'check_round', round: 1, passed: false },
        { type: 'warning', message: 'w' },
        { type: 'warning', message: 'w' },
        { type: 'kept', patch: '/runs/r/patch.diff' },
        { type: 'end', status: 'failed', exitCode: 1, reason: 'checks', durationMs: 10 },
      ]),
    );
    expect(result.checks).toEqual([{ name: 'test', command: 'npm test', timedOut: true, passed: false, exitCode: null, durationMs: 5, output: '' }]);
    expect(result).toMatchObject({ runId: 'r', status: 'failed', exitCode: 1, checkRoundsUsed: 1, trace: '/runs/r/trace.jsonl', durationMs: 10, baseCommit: 'abc', patch: '/runs/r/patch.diff', warnings: ['w'] });
  });
});
