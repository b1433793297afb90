import { describe, expect, it } from 'vitest';
import { parseTrace, TraceReadError } from '../../src/trace/read.js';

describe('the tolerant reader and files that are not traces', () => {
  it('refuses lines without a single event, naming the first bad line', () => {
    let error: unknown;
    try {
      parseTrace('\n\n# notes\nmore\n', 'notes.md', { mode: 'tolerant' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(TraceReadError);
    expect((error as TraceReadError).exitCode).toBe(64);
    expect((error as TraceReadError).message).toBe('notes.md:3: not a corral trace: not a JSON line');
    expect((error as TraceReadError).problems[0]).toMatchObject({ file: 'notes.md', line: 3 });
  });

  it('still reads an empty trace, and one whose only line a crash cut short', () => {
    expect(parseTrace('', 'trace.jsonl', { mode: 'tolerant' }).events).toEqual([]);
    const cut = parseTrace('{"v":1,"seq":0,"time":"2025', 'trace.jsonl', { mode: 'tolerant' });
    expect(cut).toMatchObject({ events: [], cut: true });
  });
});
