import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_TYPES, type RunEvent } from '../../src/trace/events.js';
import { parseTrace, readTrace, resolveTraceFile, TraceReadError } from '../../src/trace/read.js';
import { createTraceWriter } from '../../src/trace/write.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../support/repo.js';
import { PROJECT_ROOT } from '../support/cli.js';

const usage = { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };

const EVENTS: RunEvent[] = [
  { type: 'run_start', runId: 'r-1', ticket: { id: 't-1', file: '/repo/t.yaml' }, model: 'replay:/repo/r.yaml', runDir: '/repo/.corral/runs/r-1', corral: '0.1.0', configDigest: '0123456789abcdef' },
  { type: 'model_request', step: 1, messages: 1, bytes: 100 },
  { type: 'model_response', step: 1, stopReason: 'tool_use', usage, content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }], durationMs: 3 },
  { type: 'tool_call', step: 1, id: 'toolu_1', tool: 'Bash', input: { command: 'ls' } },
  { type: 'decision', step: 1, id: 'toolu_1', tool: 'Bash', effect: 'allow', rule: 'baseline.read-only', scope: 'baseline', reason: 'reads', commands: [['ls']], paths: [] },
  { type: 'tool_result', step: 1, id: 'toolu_1', tool: 'Bash', isError: false, bytes: 4, durationMs: 2 },
  { type: 'end', status: 'failed', exitCode: 1, reason: 'the agent changed nothing' },
];

/** The lines the real writer writes for EVENTS. */
function writtenLines(): string[] {
  const file = path.join(tempDir('corral-read-'), 'trace.jsonl');
  const write = createTraceWriter(file, 'r-1', 't-1', (text) => text, () => Date.UTC(2025, 0, 1));
  for (const event of EVENTS) write(event);
  return readFileSync(file, 'utf8').trim().split('\n');
}

function thrown(read: () => unknown): TraceReadError {
  try {
    read();
  } catch (error) {
    expect(error).toBeInstanceOf(TraceReadError);
    expect(error).toBeInstanceOf(UsageError);
    return error as TraceReadError;
  }
  throw new Error('expected the read to fail');
}

describe('the strict reader', () => {
  it('reads what the writer wrote, typed, envelope and all', () => {
    const read = parseTrace(`${writtenLines().join('\n')}\n`, 'trace.jsonl', { mode: 'strict' });
    expect(read).toMatchObject({ file: 'trace.jsonl', skipped: [], cut: false });
    expect(read.events.map((e) => e.type)).toEqual(EVENTS.map((e) => e.type));
    expect(read.events[3]).toEqual({ v: 1, seq: 3, time: '2025-01-01T00:00:00.000Z', run: 'r-1', ticket: 't-1', ...EVENTS[3] });
    // The envelope's step: the last model turn's, and 0 before the first.
    expect(read.events.map((e) => e.step)).toEqual([0, 1, 1, 1, 1, 1, 1]);
  });

  it('rejects a damaged line with an error naming file:line', () => {
    const lines = writtenLines();
    lines[1] = '{"v":1,"seq":1,';
    const error = thrown(() => parseTrace(`${lines.join('\n')}\n`, 'runs/r-1/trace.jsonl', { mode: 'strict' }));
    expect(error.code).toBe('trace_not_json');
    expect(error.exitCode).toBe(64);
    expect(error.message).toBe('runs/r-1/trace.jsonl:2: invalid trace line: not a JSON line');
    expect(error.problems).toEqual([{ file: 'runs/r-1/trace.jsonl', line: 2, column: 1, field: '', message: 'not a JSON line' }]);
  });

  it('rejects an event that does not fit its schema, naming the field', () => {
    const lines = writtenLines();
    lines[2] = lines[2]!.replace('"inputTokens":10', '"inputTokens":"10"');
    const error = thrown(() => parseTrace(`${lines.join('\n')}\n`, 'trace.jsonl', { mode: 'strict' }));
    expect(error.code).toBe('trace_invalid_event');
    expect(error.message).toMatch(/^trace\.jsonl:3: invalid trace line: usage\.inputTokens: model_response: /);
    expect(error.problems[0]).toMatchObject({ line: 3, field: 'usage.inputTokens' });

    const missing = writtenLines();
    missing[4] = missing[4]!.replace(',"commands":[["ls"]]', '');
    expect(thrown(() => parseTrace(missing.join('\n'), 'trace.jsonl', { mode: 'strict' })).problems[0]).toMatchObject({ line: 5, field: 'commands' });
  });

  it('rejects an unknown event type and a line that is no event', () => {
    const unknown = thrown(() => parseTrace('{"v":1,"seq":0,"type":"telemetry"}\n', 'trace.jsonl', { mode: 'strict' }));
    expect(unknown.problems[0]).toMatchObject({ line: 1, field: 'type', message: 'unknown event type `telemetry`' });
    expect(thrown(() => parseTrace('[1,2]\n', 'trace.jsonl', { mode: 'strict' })).code).toBe('trace_not_event');
  });

  it('drops a last line cut short by a crash and says so; a bad last line with its newline is damage', () => {
    const lines = writtenLines();
    const cut = `${lines.slice(0, 6).join('\n')}\n${lines[6]!.slice(0, 30)}`;
    const read = parseTrace(cut, 'trace.jsonl', { mode: 'strict' });
    expect(read.cut).toBe(true);
    expect(read.events).toHaveLength(6);
    expect(read.skipped).toMatchObject([{ line: 7, why: 'not a JSON line' }]);
    expect(thrown(() => parseTrace(`${cut}\n`, 'trace.jsonl', { mode: 'strict' })).problems[0]).toMatchObject({ line: 7 });
  });
});

describe('the tolerant reader', () => {
  it('skips and counts every line it cannot read, wherever it is', () => {
    const lines = writtenLines();
    lines[2] = lines[2]!.replace('"stopReason":"tool_use"', '"stopReason":7');
    const text = `${lines.slice(0, 6).join('\n')}\nnot json\n\n${lines[6]!.slice(0, 30)}`;
    const read = parseTrace(text, 'trace.jsonl', { mode: 'tolerant' });
    expect(read.events.map((e) => e.type)).toEqual(['run_start', 'model_request', 'tool_call', 'decision', 'tool_result']);
    expect(read.skipped.map((s) => [s.line, s.why])).toEqual([
      [3, 'model_response: Invalid input: expected string, received number'],
      [7, 'not a JSON line'],
      [9, 'not a JSON line'],
    ]);
    expect(read.cut).toBe(true);
  });
});

describe('either reader', () => {
  it('refuses a line of a newer format rather than guess its meaning', () => {
    const newer = `${writtenLines()[0]}\n{"v":2,"seq":1,"type":"model_request"}\n`;
    for (const mode of ['strict', 'tolerant'] as const) {
      const error = thrown(() => parseTrace(newer, 'trace.jsonl', { mode }));
      expect(error.code).toBe('trace_newer_format');
      expect(error.problems[0]).toMatchObject({ line: 2, field: 'v', message: expect.stringContaining('version 2') });
    }
  });

  it('says which file is missing or unreadable, with exit 64', async () => {
    const dir = tempDir('corral-read-');
    await expect(resolveTraceFile(path.join(dir, 'nope'))).rejects.toMatchObject({ code: 'trace_missing', exitCode: 64 });
    await expect(resolveTraceFile(dir)).rejects.toMatchObject({ code: 'trace_missing', message: expect.stringContaining('without a trace.jsonl') });
    await expect(readTrace(path.join(dir, 'nope.jsonl'), { mode: 'tolerant' })).rejects.toMatchObject({ code: 'trace_unreadable' });
    writeFileSync(path.join(dir, 'trace.jsonl'), `${writtenLines().join('\n')}\n`);
    const read = await readTrace(await resolveTraceFile(dir), { mode: 'strict', shownAs: 'shown.jsonl' });
    expect(read.file).toBe('shown.jsonl');
    expect(read.events).toHaveLength(EVENTS.length);
  });
});

describe('docs/trace.md', () => {
  it('has a row for every event type of the schema, and for no other', () => {
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs', 'trace.md'), 'utf8');
    const table = docs.slice(docs.indexOf('## Types, in the order a run writes them'));
    const rows = [...table.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]);
    expect([...rows].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
