import { closeSync, fstatSync, ftruncateSync, openSync, writeSync } from 'node:fs';
import type { RunEvent, TraceLine } from './events.js';
import { capText } from '../text/output-cap.js';
import type { Redactor } from '../text/redact.js';

/** The trace format's version (docs/trace.md); a reader refuses a version it does not know. */
export const TRACE_VERSION = 1;

/**
 * How much of a tool result's output a trace keeps (docs/trace.md): its first and its last
 * 4 KiB, with the number of bytes cut between them, enough for the command's first error
 * and its summary without a trace growing with every large file read.
 */
export const TRACE_OUTPUT_CAP = 8 * 1024;

/**
 * A tool's output as the trace keeps it: redacted first (a secret cut in two by the cap
 * could no longer be found), then capped.
 */
export function traceOutput(text: string, redact: Redactor): string {
  return capText(redact(text), TRACE_OUTPUT_CAP);
}

/** The file operations a trace writer uses: node's, or a test's that fails on purpose (ENOSPC). */
export interface TraceFileSystem {
  openSync(file: string, flags: 'a'): number;
  fstatSync(fd: number): { size: number };
  writeSync(fd: number, bytes: Buffer, offset: number): number;
  ftruncateSync(fd: number, length: number): void;
  closeSync(fd: number): void;
}

const NODE_FS: TraceFileSystem = { openSync, fstatSync, writeSync: (fd, bytes, offset) => writeSync(fd, bytes, offset), ftruncateSync, closeSync };

/** A trace line that could not be written: the run must stop, as it can no longer be recorded. */
export interface TraceWriteFailure {
  file: string;
  /** The errno code (ENOSPC, EDQUOT, EIO...), when there is one. */
  code: string | undefined;
  /** One sentence for a person: the file, and what went wrong. */
  message: string;
}

export interface TraceWriter {
  (event: RunEvent): void;
  /** The first write that failed; null while every line was written. */
  readonly failure: TraceWriteFailure | null;
}

/**
 * Appends each event as one JSON line the moment it happens (a synchronous write per
 * event), so a trace is readable up to the last step even after a crash. Every line
 * carries the step it belongs to: 0 before the first model request. The file stays open
 * for the run (opening it for every event cost more than the write) and is closed after
 * the `end` event; an event after that opens it again.
 *
 * A write that fails (a full disk, a quota) never throws into the run: the part of the
 * line that did get written is cut off again, so the trace ends on a whole line, nothing
 * more is written, and `failure` says what happened for the run to stop on.
 */
export function createTraceWriter(
  file: string,
  runId: string,
  ticketId: string,
  redact: Redactor,
  now: () => number = Date.now,
  fs: TraceFileSystem = NODE_FS,
  onFailure: (failure: TraceWriteFailure) => void = () => undefined,
): TraceWriter {
  let seq = 0;
  let step = 0;
  let fd: number | undefined;
  /** The length of the file's whole lines: where a failed write is cut back to. */
  let length = 0;
  let failure: TraceWriteFailure | null = null;
  const fail = (error: unknown): void => {
    const code = (error as NodeJS.ErrnoException | undefined)?.code;
    failure = { file, code, message: `cannot write the trace ${file}: ${describeWriteError(error)}` };
    if (fd !== undefined) {
      try {
        fs.ftruncateSync(fd, length);
      } catch {
        // A line cut short is still read as such (docs/trace.md); nothing more to do.
      }
      try {
        fs.closeSync(fd);
      } catch {
        // Closed or not, nothing more is written to it.
      }
      fd = undefined;
    }
    onFailure(failure);
  };
  const write = (event: RunEvent): void => {
    if ('step' in event && typeof event.step === 'number') step = event.step;
    if (failure !== null) return;
    // Typed as the reader's line, so what is written is what the reader's schema accepts;
    // not validated here, as the run's own events are typed by the same schema.
    const record: TraceLine = { v: TRACE_VERSION, seq: seq++, time: new Date(now()).toISOString(), run: runId, ticket: ticketId, step, ...event };
    const bytes = Buffer.from(`${redact(JSON.stringify(record))}\n`);
    try {
      if (fd === undefined) {
        fd = fs.openSync(file, 'a');
        length = fs.fstatSync(fd).size;
      }
      writeAll(fs, fd, bytes);
      length += bytes.length;
    } catch (error) {
      fail(error);
      return;
    }
    if (event.type === 'end') {
      const open = fd;
      fd = undefined;
      try {
        fs.closeSync(open);
      } catch (error) {
        // A close can report a write the kernel deferred (NFS, a quota): the line may not be there.
        fail(error);
      }
    }
  };
  return Object.defineProperty(write, 'failure', { get: () => failure }) as TraceWriter;
}

function writeAll(fs: TraceFileSystem, fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length; ) offset += fs.writeSync(fd, bytes, offset);
}

/** A failed write in a few words: ENOSPC is `no space left on the device (ENOSPC)`. */
export function describeWriteError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  switch (code) {
    case 'ENOSPC':
      return 'no space left on the device (ENOSPC)';
    case 'EDQUOT':
      return 'the disk quota is used up (EDQUOT)';
    case 'EFBIG':
      return 'the file is too large (EFBIG)';
    case 'EROFS':
      return 'the file system is read-only (EROFS)';
    case 'EACCES':
    case 'EPERM':
      return `permission denied (${code})`;
    default:
      return error instanceof Error ? error.message : String(error);
  }
}
