import { closeSync, openSync, writeSync } from 'node:fs';
import type { RunEvent, TraceLine } from './events.js';
import type { Redactor } from '../text/redact.js';

/** The trace format's version (docs/trace.md); a reader refuses a version it does not know. */
export const TRACE_VERSION = 1;

/**
 * Appends each event as one JSON line the moment it happens (a synchronous write per
 * event), so a trace is readable up to the last step even after a crash. Every line
 * carries the step it belongs to: 0 before the first model request. The file stays open
 * for the run (opening it for every event cost more than the write) and is closed after
 * the `end` event; an event after that opens it again.
 */
export function createTraceWriter(file: string, runId: string, ticketId: string, redact: Redactor, now: () => number = Date.now) {
  let seq = 0;
  let step = 0;
  let fd: number | undefined;
  return (event: RunEvent): void => {
    if ('step' in event && typeof event.step === 'number') step = event.step;
    // Typed as the reader's line, so what is written is what the reader's schema accepts;
    // not validated here, as the run's own events are typed by the same schema.
    const record: TraceLine = { v: TRACE_VERSION, seq: seq++, time: new Date(now()).toISOString(), run: runId, ticket: ticketId, step, ...event };
    const line = JSON.stringify(record);
    fd ??= openSync(file, 'a');
    try {
      writeAll(fd, Buffer.from(`${redact(line)}\n`));
    } finally {
      if (event.type === 'end') {
        closeSync(fd);
        fd = undefined;
      }
    }
  };
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset);
}
