import type { RunResult } from '../trace/result.js';
import { redactValue, type Redactor } from '../text/redact.js';

export const REPORT_VERSION = 1;

/** The machine-readable report of one run: the summary's facts, secrets redacted. */
export type JsonRunReport = { corral: typeof REPORT_VERSION; type: 'run' } & RunResult;

export function toJsonReport(result: RunResult, redact?: Redactor): JsonRunReport {
  return redactValue({ corral: REPORT_VERSION, type: 'run' as const, ...result }, redact);
}
