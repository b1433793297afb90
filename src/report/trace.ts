import { appendFileSync } from 'node:fs';
import type { RunEvent } from './events.js';
import type { Redactor } from './redact.js';

/** The trace format's version (docs/trace.md); a reader refuses a version it does not know. */
export const TRACE_VERSION = 1;

/**
 * Appends each event as one JSON line the moment it happens (a synchronous append per
 * event), so a trace is readable up to the last step even after a crash. Every line
 * carries the step it belongs to: 0 before the first model request.
 */
export function createTraceWriter(file: string, runId: string, ticketId: string, redact: Redactor, now: () => number = Date.now) {
  let seq = 0;
  let step = 0;
  return (event: RunEvent): void => {
    if ('step' in event && typeof event.step === 'number') step = event.step;
    const line = JSON.stringify({ v: TRACE_VERSION, seq: seq++, time: new Date(now()).toISOString(), run: runId, ticket: ticketId, step, ...event });
    appendFileSync(file, `${redact(line)}\n`);
  };
}
