import type { ChalkInstance } from 'chalk';
import type { BatchReport, JsonSkippedReport } from './batch-report.js';
import type { JsonRunReport } from './json.js';
import type { RunEvent } from '../trace/events.js';
import type { RunResult } from '../trace/result.js';
import type { Redactor } from '../text/redact.js';
import type { Screen } from './screen.js';

// What a batch tells its reporters, as vitest tells its own: every hook is optional, so
// a reporter names only the moments it cares about. `corral run` calls them in this order:
// onBatchStart, then for each ticket onRunStart, onEvent…, onRunEnd (or onSkipped for a
// ticket never started), then close, then onBatchEnd. `corral report merge` runs nothing:
// onBatchStart (merged), close, onBatchEnd.

/** Every reporter corral has, in the order they are called (the screen's before the files'). */
export const REPORTER_NAMES = ['terminal', 'live', 'json', 'junit', 'github'] as const;

export type ReporterName = (typeof REPORTER_NAMES)[number];

export interface BatchStart {
  /** How many tickets the batch holds (this shard's, for a shard). */
  tickets: number;
  /** The tickets arrive only with onBatchEnd's report, already finished elsewhere (`report merge`). */
  merged: boolean;
}

export interface Reporter {
  readonly name: ReporterName;
  onBatchStart?(batch: BatchStart): void;
  onRunStart?(ticketId: string): void;
  onEvent?(ticketId: string, event: RunEvent): void;
  /** A ticket finished: its result, and its report line (redacted) as JSON prints it. */
  onRunEnd?(result: RunResult, report: JsonRunReport): void;
  /** A ticket the batch did not start (bail, --max-usd, an interrupt). */
  onSkipped?(report: JsonSkippedReport): void;
  /** Nothing more will run (also when the batch failed): take down whatever is drawn live. */
  close?(): void;
  /** The whole batch, sorted, with its totals. Files are written here. */
  onBatchEnd?(report: BatchReport): void | Promise<void>;
}

/** What a command hands the registry to build its reporters from. */
export interface ReporterContext {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  env: NodeJS.ProcessEnv;
  /** Paths are shown relative to it. */
  cwd: string;
  /** What corral prints is redacted like its trace. */
  redact: Redactor;
  /** The file `--junit` names, resolved; the junit reporter needs one. */
  junit?: string | undefined;
}

/** What each reporter is built with: the command's context, plus what the set shares. */
export interface ReporterKit extends ReporterContext {
  /** The streams every reporter of the set writes through. */
  screen: Screen;
  /** Colours for each stream. */
  out: ChalkInstance;
  err: ChalkInstance;
  /** The json reporter is in the set: stdout carries JSON lines and nothing else. */
  stdoutIsJson: boolean;
}
