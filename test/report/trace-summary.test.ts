import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { parseTrace, type TraceRead } from '../../src/trace/read.js';
import { foldRun } from '../../src/trace/fold.js';
import { formatTraceSummary, listPrice, summarizeTrace as summarizeFold } from '../../src/report/trace-summary.js';

const plain = new Chalk({ level: 0 });

/** Wraps events in the writer's envelope, one second apart, one JSON line each. */
function lines(events: Record<string, unknown>[]): string[] {
  let step = 0;
  return events.map((event, seq) => {
    if (typeof event.step === 'number') step = event.step;
    return JSON.stringify({ v: 1, seq, time: new Date(Date.UTC(2025, 0, 1, 0, 0, seq)).toISOString(), run: 'r-1', ticket: 't-1', step, ...event });
  });
}

const tolerant = (text: string): TraceRead => parseTrace(text, 'trace.jsonl', { mode: 'tolerant' });

/** The summary of a read trace, as `corral trace` makes it. */
const summarizeRead = (read: TraceRead) => summarizeFold(foldRun(read.events, { price: listPrice }), read.skipped.length);

/** The summary of whole events, which must all be valid: none may be skipped. */
function summarizeTrace(events: Record<string, unknown>[]) {
  const read = tolerant(`${lines(events).join('\n')}\n`);
  expect(read.skipped).toEqual([]);
  return summarizeRead(read);
}

const usage = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ inputTokens: input, outputTokens: output, cacheReadTokens: cacheRead, cacheWriteTokens: cacheWrite });

const START = { type: 'run_start', runId: 'r-1', ticket: { id: 't-1', file: 't.yaml', title: 'Fix it' }, model: 'claude-sonnet-4-5', runDir: '/runs/r-1', corral: '0.1.0', configDigest: '0123456789abcdef' };

const RUN = [
  START,
  { type: 'model_request', step: 1, messages: 1, bytes: 10 },
  { type: 'model_response', step: 1, stopReason: 'tool_use', usage: usage(1000, 100, 0, 2000), content: [], durationMs: 5 },
  { type: 'tool_call', step: 1, id: 'a', tool: 'Bash', input: { command: 'npm   test' } },
  { type: 'decision', step: 1, id: 'a', tool: 'Bash', effect: 'allow', rule: 'checks', scope: 'baseline', reason: 'a check', commands: [], paths: [] },
  { type: 'tool_result', step: 1, id: 'a', tool: 'Bash', isError: false, bytes: 5, durationMs: 1500 },
  { type: 'tool_call', step: 1, id: 'b', tool: 'Read', input: { file_path: '/etc/shadow' } },
  { type: 'decision', step: 1, id: 'b', tool: 'Read', effect: 'deny', rule: 'baseline.outside-worktree', scope: 'baseline', reason: 'outside', commands: [], paths: ['/etc/shadow'] },
  { type: 'tool_result', step: 1, id: 'b', tool: 'Read', isError: true, bytes: 5, durationMs: 2 },
  { type: 'model_request', step: 2, messages: 3, bytes: 10 },
  { type: 'model_response', step: 2, stopReason: 'tool_use', usage: usage(50, 200, 2000, 0), content: [], durationMs: 5 },
  { type: 'tool_call', step: 2, id: 'c', tool: 'Bash', input: { command: 'npm install left-pad' } },
  { type: 'decision', step: 2, id: 'c', tool: 'Bash', effect: 'ask', rule: 'default', scope: 'default', reason: 'not known', commands: [], paths: [] },
  { type: 'approval', step: 2, id: 'c', tool: 'Bash', rule: 'default', approved: false, by: 'unattended' },
  { type: 'tool_result', step: 2, id: 'c', tool: 'Bash', isError: true, bytes: 5, durationMs: 1 },
  { type: 'check', round: 1, name: 'test', passed: false, exitCode: 1, durationMs: 300, output: '' },
  { type: 'check', round: 2, name: 'test', passed: true, exitCode: 0, durationMs: 200, output: '' },
  { type: 'fence', ok: false, verdicts: [{ change: { kind: 'modified', path: 'src/a.ts' }, allowed: true }, { change: { kind: 'added', path: '.env' }, allowed: false, reason: 'forbidden by .env' }] },
  { type: 'host', ok: true, differences: [] },
  { type: 'end', status: 'fence_violated', exitCode: 3, reason: 'changed .env' },
];

describe('summarizeTrace', () => {
  it('counts steps, tools, denied and asked calls, tokens, cache and cost', () => {
    const s = summarizeTrace(RUN);
    expect(s).toMatchObject({ runId: 'r-1', ticket: { id: 't-1', title: 'Fix it' }, model: 'claude-sonnet-4-5', finished: true, status: 'fence_violated', exitCode: 3, steps: 2, toolCalls: 3, lastStep: 2 });
    expect(s.tools).toEqual([
      { tool: 'Bash', calls: 2, errors: 1, totalMs: 1501 },
      { tool: 'Read', calls: 1, errors: 1, totalMs: 2 },
    ]);
    expect(s.denied).toEqual([{ step: 1, tool: 'Read', call: 'Read(/etc/shadow)', rule: 'baseline.outside-worktree', scope: 'baseline', reason: 'outside' }]);
    expect(s.asked).toEqual([{ step: 2, tool: 'Bash', call: 'Bash(npm install left-pad)', rule: 'default', scope: 'default', reason: 'not known', answer: 'refused', by: 'unattended' }]);
    expect(s.slowest.map((x) => [x.call, x.durationMs])).toEqual([['Bash(npm test)', 1500], ['Read(/etc/shadow)', 2], ['Bash(npm install left-pad)', 1]]);
    expect(s.tokens).toEqual({ input: 1050, output: 300, cacheRead: 2000, cacheWrite: 2000, total: 5350 });
    expect(s.cacheHitRatio).toBeCloseTo(2000 / 5050);
    // Sonnet: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    expect(s.costUsd).toBeCloseTo((1050 * 3 + 300 * 15 + 2000 * 0.3 + 2000 * 3.75) / 1e6);
    expect(s.checks).toEqual({ round: 2, results: [{ name: 'test', passed: true, exitCode: 0, durationMs: 200 }] });
    expect(s.fence).toEqual({ ok: false, changes: 2, violations: [{ path: '.env', reason: 'forbidden by .env' }] });
    expect(s.hostChanges).toEqual([]);
    expect(s.durationMs).toBe((RUN.length - 1) * 1000);
    expect(s.skippedLines).toBe(0);
  });

  it('keeps only the five slowest calls', () => {
    const calls = [10, 70, 30, 50, 20, 60, 40].flatMap((ms, i) => [
      { type: 'tool_call', step: 1, id: `c${i}`, tool: 'Bash', input: { command: `sleep ${ms}` } },
      { type: 'tool_result', step: 1, id: `c${i}`, tool: 'Bash', isError: false, bytes: 0, durationMs: ms },
    ]);
    expect(summarizeTrace([START, ...calls]).slowest.map((x) => x.durationMs)).toEqual([70, 60, 50, 40, 30]);
  });

  it('prices a replay model at 0 and an unknown one as unknown', () => {
    const turn = { type: 'model_response', step: 1, stopReason: 'end_turn', usage: usage(10, 10), content: [], durationMs: 1 };
    expect(summarizeTrace([{ ...START, model: 'replay:replay.yaml' }, turn]).costUsd).toBe(0);
    expect(summarizeTrace([{ ...START, model: 'some-model-of-tomorrow' }, turn]).costUsd).toBeNull();
    expect(summarizeTrace([turn]).costUsd).toBeNull();
    expect(summarizeTrace([turn]).cacheHitRatio).toBe(0);
    expect(summarizeTrace([START]).cacheHitRatio).toBeNull();
  });

  it('an ask the trace ends before answering stays unanswered', () => {
    const s = summarizeTrace(RUN.slice(0, 13));
    expect(s.asked.map((a) => a.answer)).toEqual(['unanswered']);
    expect(s.finished).toBe(false);
  });
});

describe('a trace cut short by a crash', () => {
  const text = lines(RUN.slice(0, 12)).join('\n');
  const cut = `${text}\n${lines(RUN)[12]!.slice(0, 40)}`;

  it('skips and counts the half-written last line, never fails', () => {
    const parsed = tolerant(cut);
    expect(parsed.events).toHaveLength(12);
    expect(parsed.skipped).toEqual([{ line: 13, text: expect.stringContaining('{"v":1'), why: 'not a JSON line' }]);
    expect(parsed.cut).toBe(true);
    const s = summarizeRead(parsed);
    expect(s).toMatchObject({ finished: false, status: null, exitCode: null, steps: 2, toolCalls: 3, lastStep: 2, skippedLines: 1 });
    expect(s.warnings).toEqual(['1 unreadable line skipped (a line cut short by a crash, or damage)']);
  });

  it('skips lines that are not an event anywhere in the file, and blank lines silently', () => {
    const parsed = tolerant(`[1,2]\n\n{"no":"type"}\n${text}\nnot json\n`);
    expect(parsed.events).toHaveLength(12);
    expect(parsed.skipped.map((s) => s.line)).toEqual([1, 3, 16]);
    expect(parsed.cut).toBe(false);
  });

  it('refuses a newer trace format instead of guessing', () => {
    expect(() => tolerant('{"v":2,"type":"run_start"}\n')).toThrow(/version 2/);
  });

  it('says it is unfinished, at which step', () => {
    const out = formatTraceSummary(summarizeRead(tolerant(cut)), plain);
    expect(out).toContain('unfinished: the trace ends at step 2');
    expect(out).toContain('1 unreadable line skipped');
  });

  it('an empty file summarises to nothing, without failing', () => {
    const s = summarizeRead(tolerant(''));
    expect(s).toMatchObject({ finished: false, steps: 0, toolCalls: 0, ticket: null, costUsd: null });
    expect(formatTraceSummary(s, plain)).toContain('unfinished: the trace ends at step 0');
  });
});

describe('formatTraceSummary', () => {
  it('shows the run at a glance', () => {
    const out = formatTraceSummary(summarizeTrace(RUN), plain);
    expect(out).toContain('t-1 — Fix it  r-1');
    expect(out).toContain('status   fence_violated (exit 3)  changed .env');
    expect(out).toContain('steps    2 · 3 tool calls · 1 denied · 1 asked');
    expect(out).toContain('tokens   1,050 in · 300 out · 2,000 cache read · 2,000 cache write · cache hit 39.6%');
    expect(out).toMatch(/Bash\s+2 × · 1\.5s \(1 error\)/);
    expect(out).toContain('✘ Read(/etc/shadow)  step 1, denied by baseline.outside-worktree: outside');
    expect(out).toContain('? Bash(npm install left-pad)  step 2, asked by default, refused by unattended: not known');
    expect(out).toMatch(/1\.5s {2}Bash\(npm test\)/);
    expect(out).toContain('✘ .env  forbidden by .env');
    expect(out).not.toContain('host');
  });

  it('makes escape sequences from the model visible instead of acting on them', () => {
    const run = [START, { type: 'tool_call', step: 1, id: 'x', tool: 'Bash', input: { command: 'echo \u001b[31mred' } }, { type: 'decision', step: 1, id: 'x', tool: 'Bash', effect: 'deny', rule: 'r', scope: 's', reason: 'why', commands: [], paths: [] }];
    const out = formatTraceSummary(summarizeTrace(run), plain);
    expect(out).toContain('Bash(echo \\x1b[31mred)');
    expect(out).not.toContain('\u001b');
  });
});

describe('the context line', () => {
  it('counts the clearings and compactions of a long run, and is absent from a run that needed none', () => {
    const edits = [
      { type: 'context_cleared', step: 9, results: 4, bytesBefore: 400_000, bytesAfter: 100_000, tokensBefore: 120_000, tokensAfter: 40_000, window: 200_000 },
      { type: 'context_cleared', step: 20, results: 6, bytesBefore: 420_000, bytesAfter: 260_000, tokensBefore: 118_000, tokensAfter: 80_000, window: 200_000 },
      { type: 'context_compacted', step: 20, turns: 14, bytesBefore: 260_000, bytesAfter: 60_000, tokensBefore: 80_000, tokensAfter: 20_000, summary: '[corral compacted this conversation ...]' },
    ];
    const summary = summarizeTrace([...RUN.slice(0, 2), ...edits, ...RUN.slice(2)]);
    expect(summary.context).toEqual({ clears: 2, clearedResults: 10, compactions: 1, compactedTurns: 14 });
    expect(formatTraceSummary(summary, plain)).toContain('  context  cleared 2× (10 tool results) · compacted 1× (14 turns into a summary)\n');
    const none = summarizeTrace(RUN);
    expect(none.context).toBeNull();
    expect(formatTraceSummary(none, plain)).not.toContain('context');
  });
});
