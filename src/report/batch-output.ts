import type { ChalkInstance } from 'chalk';
import type { BatchReport, JsonSkippedReport } from './batch-report.js';
import type { RunResult } from '../trace/result.js';
import { formatBatchTable } from './batch-table.js';
import type { RunEvent } from '../trace/events.js';
import type { JsonRunReport } from './json.js';
import { LiveView } from './live-view.js';
import { formatProgress } from './progress.js';
import type { Redactor } from '../text/redact.js';
import { formatSummary } from './summary.js';
import { makeVisible as visible } from '../text/visible.js';

// Where a batch's output goes. stdout carries results (each ticket's summary, then the
// table; or JSON lines, then the totals), stderr carries progress: a live view in a
// terminal, plain append-only lines in CI or a log.

export interface BatchOutputOptions {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  /** Colours for each stream. */
  out: ChalkInstance;
  err: ChalkInstance;
  json: boolean;
  /** A live view on stderr (a terminal, outside CI, more than one ticket); else plain lines. */
  live: boolean;
  /** More than one ticket: the final table is worth printing. */
  batch: boolean;
  cwd: string;
  redact: Redactor;
}

export interface BatchOutput {
  started(ticketId: string): void;
  event(ticketId: string, event: RunEvent): void;
  finished(result: RunResult, report: JsonRunReport): void;
  skipped(report: JsonSkippedReport): void;
  /** The end: the totals line (JSON) or the table. */
  end(report: BatchReport): void;
  /** A line for the person (e.g. that a signal arrived), on stderr above the live view. */
  notice(line: string): void;
  /** Runs a prompt with the terminal to itself. */
  prompting<T>(ask: () => Promise<T>): Promise<T>;
  close(): void;
}

// In the live view these are what the running line already shows; the rest (denials,
// asks, hooks, warnings, host changes) still scroll above it.
const SHOWN_LIVE = new Set<RunEvent['type']>(['policy', 'worktree', 'sandbox', 'model_response', 'setup', 'check', 'fence']);

export function createBatchOutput(options: BatchOutputOptions): BatchOutput {
  const { stdout, stderr, redact } = options;
  const view = options.live ? new LiveView({ out: stderr, c: options.err }) : undefined;
  // stdout on the same terminal as the view must print above it, or the redraw erases it.
  const toStdout = (text: string): void => {
    if (view && stdout.isTTY) view.printAbove(text, stdout);
    else stdout.write(text);
  };
  const toStderr = (line: string): void => {
    if (view) view.printAbove(line);
    else stderr.write(`${line}\n`);
  };

  return {
    started(ticketId) {
      view?.started(ticketId);
    },
    event(ticketId, event) {
      view?.event(ticketId, event);
      if (view && SHOWN_LIVE.has(event.type) && !(event.type === 'sandbox' && event.warning)) return;
      const line = formatProgress(ticketId, event, options.err);
      if (line) toStderr(redact(line));
    },
    finished(result, report) {
      view?.finished(result.ticket.id);
      if (options.json) toStdout(`${JSON.stringify(report)}\n`);
      else toStdout(`${redact(formatSummary(result, options.out, options.cwd))}\n`);
    },
    skipped(report) {
      if (options.json) toStdout(`${JSON.stringify(report)}\n`);
      else toStdout(`${options.out.yellow.bold('⊘ SKIPPED')}  ${options.out.bold(visible(report.ticket.id))}  ${options.out.dim(visible(report.reason))}\n`);
    },
    end(report) {
      view?.close();
      if (options.json) stdout.write(`${JSON.stringify(report.totals)}\n`);
      else if (options.batch) stdout.write(`${formatBatchTable(report, options.out)}`);
    },
    notice(line) {
      // After a ^C echoed at a terminal, start on a line of its own.
      if (!view && stderr.isTTY) stderr.write('\n');
      toStderr(line);
    },
    prompting(ask) {
      return view ? view.hiddenWhile(ask) : ask();
    },
    close() {
      view?.close();
    },
  };
}
