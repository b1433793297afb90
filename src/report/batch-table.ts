import type { ChalkInstance } from 'chalk';
import { totalTokens } from '../trace/records.js';
import type { BatchReport, JsonTotals, TicketReport } from './batch-report.js';
import { formatCount, formatDuration, STATUS_LABEL } from './summary.js';
import { makeVisible as visible } from '../text/visible.js';

/** The batch at a glance, after every ticket: one totals line, then one row per ticket. Pure. */
export function formatBatchTable(report: BatchReport, c: ChalkInstance): string {
  const rows = report.tickets.map((ticket) => rowOf(ticket, c));
  const widths = [0, 1, 2, 3, 4, 5].map((i) => Math.max(0, ...rows.map((row) => row.cells[i]!.length)));
  const lines = [formatTotalsLine(report.totals, c)];
  for (const row of rows) {
    const cells = row.cells.map((cell, i) => (i >= 2 ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)));
    const paint = row.ok ? c.green : row.skipped ? c.yellow : c.red;
    lines.push(`  ${paint(cells[0]!)}  ${c.bold(cells[1]!)}  ${c.dim(cells.slice(2).join('  '))}${row.why ? `  ${row.why}` : ''}`.trimEnd());
  }
  return `${lines.join('\n')}\n`;
}

/** `corral: 8 tickets · 1 failed, 1 skipped, 6 passed · 12,345 tokens · $0.0123 · 12.3s · exit 1` */
export function formatTotalsLine(totals: JsonTotals, c: ChalkInstance): string {
  const parts = describeTotals(totals);
  const shards = totals.shards.length === 0 ? '' : ` · shard${totals.shards.length === 1 ? '' : 's'} ${totals.shards.map((s) => `${s.index}/${s.count}`).join(', ')}`;
  const paint = totals.exitCode === 0 ? c.green.bold : c.red.bold;
  return `${paint(`corral: ${parts.tickets}`)} · ${parts.counts} · ${parts.tokens} · ${parts.cost} · ${parts.time}${shards} · ${paint(`exit ${totals.exitCode}`)}`;
}

/** The words of a totals line, shared by the terminal table and the GitHub step summary. */
export function describeTotals(totals: JsonTotals): { tickets: string; counts: string; tokens: string; cost: string; time: string } {
  const counts = Object.entries(totals.byStatus)
    .sort(([a], [b]) => statusOrder(a) - statusOrder(b) || (a < b ? -1 : a > b ? 1 : 0))
    .map(([status, n]) => `${n} ${statusWords(status)}`)
    .join(', ');
  return {
    tickets: `${totals.tickets} ticket${totals.tickets === 1 ? '' : 's'}`,
    counts: counts || 'none run',
    tokens: `${formatCount(totalTokens(totals.usage))} tokens`,
    cost: totals.costUsd === null ? 'cost unknown' : `$${totals.costUsd.toFixed(4)}${totals.costUnknown > 0 ? ` (+${totals.costUnknown} unknown)` : ''}`,
    time: formatDuration(totals.durationMs),
  };
}

/** `fence_violated` → `fence violated`. */
export function statusWords(status: string): string {
  return status.replace(/_/g, ' ');
}

function rowOf(ticket: TicketReport, c: ChalkInstance): { cells: string[]; ok: boolean; skipped: boolean; why: string } {
  if (ticket.type === 'skipped') {
    return { cells: ['⊘ SKIPPED', visible(ticket.ticket.id), '', '', '', ''], ok: false, skipped: true, why: c.dim(visible(ticket.reason)) };
  }
  const ok = ticket.status === 'passed';
  return {
    cells: [
      `${ok ? '✔' : '✘'} ${STATUS_LABEL[ticket.status]}`,
      visible(ticket.ticket.id),
      `${ticket.steps} step${ticket.steps === 1 ? '' : 's'}`,
      `${formatCount(totalTokens(ticket.usage))} tok`,
      ticket.costUsd === null ? '$?' : `$${ticket.costUsd.toFixed(4)}`,
      formatDuration(ticket.durationMs),
    ],
    ok,
    skipped: false,
    why: ok ? '' : visible(ticket.reason),
  };
}

// Worst news first in the totals line; passed last.
const ORDER = ['interrupted', 'internal_error', 'fence_violated', 'host_changed', 'model_error', 'refused', 'blocked', 'budget_exhausted', 'failed', 'skipped', 'passed'];

function statusOrder(status: string): number {
  const i = ORDER.indexOf(status);
  return i === -1 ? ORDER.length : i;
}
