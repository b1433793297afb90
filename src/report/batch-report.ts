import { addUsage } from '../trace/records.js';
import { ZERO_USAGE, type TokenUsage } from '../trace/records.js';
import { EXIT } from '../errors.js';
import { REPORT_VERSION, ticketRef, type JsonRunReport, type TicketRef } from './json.js';
import { mostSevereExitCode } from '../trace/outcome.js';

// The batch report: what `corral run --json` prints (one line per ticket, then the
// totals) and what `corral report merge` reads back and joins. JUnit, the GitHub outputs
// and the final table are all drawn from it, so a merged report renders like a live one.

/** Why a ticket of a batch never ran. */
export type SkipCause = 'bail' | 'max_usd' | 'interrupted';

/** A ticket the batch did not start. */
export interface JsonSkippedReport {
  corral: typeof REPORT_VERSION;
  type: 'skipped';
  ticket: TicketRef;
  status: 'skipped';
  cause: SkipCause;
  /** One line a person can act on, e.g. which earlier ticket failed, or what the batch had left. */
  reason: string;
  /** The exit code this skip adds to the batch: 3 when the batch budget ran out, else none. */
  exitCode: number | null;
}

export type TicketReport = JsonRunReport | JsonSkippedReport;

/** Which slice of a folder a run covered (`--shard index/count`, index from 1). */
export interface ShardSpec {
  index: number;
  count: number;
}

/** The last line of a batch report. */
export interface JsonTotals {
  corral: typeof REPORT_VERSION;
  type: 'totals';
  tickets: number;
  /** Tickets per status, `skipped` included; statuses with no ticket are left out. */
  byStatus: Record<string, number>;
  exitCode: number;
  usage: TokenUsage;
  /** Summed over the tickets whose cost is known; null when none is. */
  costUsd: number | null;
  /** Tickets whose cost is unknown (a model without a price). */
  costUnknown: number;
  /** Wall time of the batch (of the longest shard, once merged). */
  durationMs: number;
  /** The shard this report covers, or every shard a merged report joined. */
  shards: ShardSpec[];
}

export interface BatchReport {
  /** Sorted by ticket file, then id: the order is the same however the runs interleaved. */
  tickets: TicketReport[];
  totals: JsonTotals;
}

/** The totals of `tickets`: counts, tokens, cost and the most severe exit code. */
export function totalsOf(tickets: TicketReport[], durationMs: number, shards: ShardSpec[], extraCodes: number[] = []): JsonTotals {
  const byStatus: Record<string, number> = {};
  let usage = ZERO_USAGE;
  let cost = 0;
  let costKnown = 0;
  let costUnknown = 0;
  const codes: number[] = [...extraCodes];
  for (const ticket of tickets) {
    byStatus[ticket.status] = (byStatus[ticket.status] ?? 0) + 1;
    // A skip for bail or interruption adds no code of its own.
    if (ticket.exitCode !== null) codes.push(ticket.exitCode);
    if (ticket.type !== 'run') continue;
    usage = addUsage(usage, ticket.usage);
    if (ticket.costUsd === null) costUnknown++;
    else {
      cost += ticket.costUsd;
      costKnown++;
    }
  }
  return {
    corral: REPORT_VERSION,
    type: 'totals',
    tickets: tickets.length,
    byStatus,
    exitCode: codes.length === 0 ? EXIT.passed : mostSevereExitCode(codes),
    usage,
    costUsd: costKnown === 0 ? null : Math.round(cost * 1e6) / 1e6,
    costUnknown,
    durationMs,
    shards,
  };
}

/** Ticket reports in a stable order: by file, then id. */
export function sortTicketReports(tickets: TicketReport[]): TicketReport[] {
  return [...tickets].sort((a, b) => compare(a.ticket.file, b.ticket.file) || compare(a.ticket.id, b.ticket.id));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The report line of a ticket the batch did not start. */
export function skippedReport(ticket: { id: string; file: string; title?: string }, cause: SkipCause, reason: string): JsonSkippedReport {
  return {
    corral: REPORT_VERSION,
    type: 'skipped',
    ticket: ticketRef(ticket),
    status: 'skipped',
    cause,
    reason,
    // Running out of the batch's money is the batch's budget exhausted; a bail or an interrupt already has its own code.
    exitCode: cause === 'max_usd' ? EXIT.budget_exhausted : null,
  };
}
