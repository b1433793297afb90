import { appendFileSync } from 'node:fs';
import type { RunEvent } from './events.js';
import type { Redactor } from './redact.js';

export const TRACE_VERSION = 1;

/**
 * Appends each event as one JSON line the moment it happens (a synchronous append per
 * event), so a trace is readable up to the last step even after a crash.
 */
export function createTraceWriter(file: string, runId: string, ticketId: string, redact: Redactor, now: () => number = Date.now) {
  let seq = 0;
  return (event: RunEvent): void => {
    const line = JSON.stringify({ v: TRACE_VERSION, seq: seq++, time: new Date(now()).toISOString(), run: runId, ticket: ticketId, ...event });
    appendFileSync(file, `${redact(line)}\n`);
  };
}
