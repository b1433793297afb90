import * as fs from 'node:fs';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/trace/events.js';
import { parseTrace } from '../../src/trace/read.js';
import { createTraceWriter, type TraceFileSystem, type TraceWriteFailure } from '../../src/trace/write.js';
import { tempDir } from '../support/repo.js';
import { enospc, traceFileSystemWith } from '../support/full-disk.js';

// A full disk, injected: the real file system until `budget` bytes are written, then a
// write that takes part of its line and fails with ENOSPC, as write(2) does on a full disk.

function fullAfter(budget: number): TraceFileSystem {
  let left = budget;
  return traceFileSystemWith((fd, bytes, offset) => {
    if (left <= 0) throw enospc();
    const take = Math.min(left, bytes.length - offset);
    left -= take;
    return fs.writeSync(fd, bytes, offset, take);
  });
}

const warning = (n: number): RunEvent => ({ type: 'warning', message: `warning number ${n}` });

describe('a trace writer on a full disk', () => {
  it('stops at the last whole line, says why once, and never throws into the run', () => {
    const file = path.join(tempDir('corral-write-'), 'trace.jsonl');
    const failures: TraceWriteFailure[] = [];
    // Room for one line and part of the second.
    const write = createTraceWriter(file, 'r-1', 't-1', (text) => text, () => Date.UTC(2025, 0, 1), fullAfter(150), (failure) => failures.push(failure));
    write(warning(1));
    expect(write.failure).toBeNull();
    expect(() => write(warning(2))).not.toThrow();
    expect(() => write(warning(3))).not.toThrow();
    write({ type: 'end', status: 'passed', exitCode: 0, reason: 'done' });

    expect(failures).toHaveLength(1);
    expect(write.failure).toEqual({ file, code: 'ENOSPC', message: `cannot write the trace ${file}: no space left on the device (ENOSPC)` });
    const text = readFileSync(file, 'utf8');
    // Whole lines only: the part of line 2 that made it to the disk was cut off again.
    expect(text.endsWith('\n')).toBe(true);
    const read = parseTrace(text, file, { mode: 'strict' });
    expect(read.cut).toBe(false);
    expect(read.events.map((event) => (event.type === 'warning' ? event.message : event.type))).toEqual(['warning number 1']);
  });

  it('fails on the first line when the disk is full from the start, leaving an empty file', () => {
    const file = path.join(tempDir('corral-write-'), 'trace.jsonl');
    const write = createTraceWriter(file, 'r-1', 't-1', (text) => text, Date.now, fullAfter(10));
    write(warning(1));
    expect(write.failure?.code).toBe('ENOSPC');
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('appends after what a file already holds, and cuts back only its own part line', () => {
    const file = path.join(tempDir('corral-write-'), 'trace.jsonl');
    fs.writeFileSync(file, 'earlier\n');
    const write = createTraceWriter(file, 'r-1', 't-1', (text) => text, Date.now, fullAfter(20));
    write(warning(1));
    expect(write.failure?.code).toBe('ENOSPC');
    expect(readFileSync(file, 'utf8')).toBe('earlier\n');
  });
});
