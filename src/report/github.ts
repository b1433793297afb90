import path from 'node:path';
import { totalTokens } from '../trace/records.js';
import type { BatchReport, JsonTotals, TicketReport } from './batch-report.js';
import { formatCount, formatDuration } from './summary.js';
import { makeVisible } from '../text/visible.js';
import { reportPath } from './report-path.js';
import { describeTotals, statusWords } from './batch-table.js';

// What a GitHub Actions job shows of a batch: an annotation on each ticket file that did
// not pass (workflow commands on stdout), and a table for the job's step summary
// ($GITHUB_STEP_SUMMARY, Markdown).

export interface GithubAnnotationOptions {
  cwd: string;
  /** GITHUB_WORKSPACE: annotation paths must be relative to the repository's checkout. */
  workspace?: string;
}

/** GitHub shows at most this many `::error` annotations of one step and drops the rest without a word. */
export const GITHUB_ERROR_LIMIT = 10;

/**
 * One `::error` workflow command per ticket that needs a person's attention; past
 * GITHUB_ERROR_LIMIT, the first ones less one, and a last annotation naming the rest.
 */
export function githubAnnotations(report: BatchReport, options: GithubAnnotationOptions): string[] {
  const base = options.workspace ?? options.cwd;
  const file = (ticket: TicketReport) => reportPath(base, path.resolve(options.cwd, ticket.ticket.file));
  const needing = report.tickets.filter(needsAnnotation);
  const shown = needing.length > GITHUB_ERROR_LIMIT ? needing.slice(0, GITHUB_ERROR_LIMIT - 1) : needing;
  const lines = shown.map((ticket) => {
    const title = `corral: ${ticket.ticket.id} ${ticket.status}`;
    return `::error file=${escapeProperty(file(ticket))},title=${escapeProperty(title)}::${escapeData(annotationMessage(ticket))}`;
  });
  const rest = needing.slice(shown.length);
  if (rest.length > 0) {
    const title = `corral: ${rest.length} more tickets did not pass`;
    const message = [`GitHub shows ${GITHUB_ERROR_LIMIT} annotations a step; these are in the step summary and the JUnit report:`, ...rest.map((ticket) => `${makeVisible(ticket.ticket.id)} ${ticket.status} (${file(ticket)})`)].join('\n');
    lines.push(`::error title=${escapeProperty(title)}::${escapeData(message)}`);
  }
  return lines;
}

/** Skips for bail or interruption only echo another ticket's trouble; a batch budget running out is news of its own. */
function needsAnnotation(ticket: TicketReport): boolean {
  if (ticket.type === 'skipped') return ticket.cause === 'max_usd';
  return ticket.status !== 'passed';
}

function annotationMessage(ticket: TicketReport): string {
  const lines = [visibleKeepingLineBreaks(ticket.reason)];
  if (ticket.type === 'run') {
    const failing = ticket.checks.filter((check) => !check.passed).map((check) => makeVisible(check.name));
    if (failing.length > 0) lines.push(`failing checks: ${failing.join(', ')}`);
  }
  return lines.join('\n');
}

/** Workflow command data: GitHub unescapes these three, so a line break cannot start a command of its own. */
export function escapeData(value: string): string {
  return value.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** Workflow command property values: `:` and `,` would otherwise end the value. */
export function escapeProperty(value: string): string {
  return escapeData(value).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

// Line breaks are kept (escaping carries them to the annotation); every other control or
// invisible character is written out, as in the terminal summary.
function visibleKeepingLineBreaks(text: string): string {
  return text
    .split(/(\r\n|\r|\n)/)
    .map((part, i) => (i % 2 === 1 ? part : makeVisible(part)))
    .join('');
}

/** How much of a reason a table cell shows. */
export const REASON_LIMIT = 200;

/** The Markdown for $GITHUB_STEP_SUMMARY: a totals line and one table row per ticket. */
export function githubStepSummary(report: BatchReport, options: { cwd: string }): string {
  const lines = [
    '### corral',
    '',
    totalsLine(report.totals),
    '',
    '| Ticket | Status | Steps | Tokens | Cost | Time | Why |',
    '| --- | --- | ---: | ---: | ---: | ---: | --- |',
    ...report.tickets.map((ticket) => tableRow(ticket, options.cwd)),
  ];
  return `${lines.join('\n')}\n`;
}

function totalsLine(totals: JsonTotals): string {
  const parts = describeTotals(totals);
  return escapeMarkdown([`${parts.tickets}: ${parts.counts}`, parts.tokens, parts.cost, parts.time].join(' · '));
}

function tableRow(ticket: TicketReport, cwd: string): string {
  const title = ticket.ticket.title ? ` — ${ticket.ticket.title}` : '';
  const name = `${escapeCell(ticket.ticket.id + title)}<br><sub>${escapeCell(reportPath(cwd, ticket.ticket.file))}</sub>`;
  const status = `${ticket.status === 'passed' ? '✅' : ticket.type === 'skipped' ? '⏭️' : '❌'} ${statusWords(ticket.status)}`;
  const spent =
    ticket.type === 'run'
      ? [String(ticket.steps), formatCount(totalTokens(ticket.usage)), ticket.costUsd === null ? 'unknown' : `$${ticket.costUsd.toFixed(4)}`, formatDuration(ticket.durationMs)]
      : ['—', '—', '—', '—'];
  const why = ticket.status === 'passed' ? '' : escapeCell(cut(ticket.reason, REASON_LIMIT));
  return `| ${[name, status, ...spent, why].join(' | ')} |`;
}

/** At most `limit` characters (code points), with an ellipsis when cut. */
function cut(text: string, limit: number): string {
  const chars = Array.from(text);
  return chars.length <= limit ? text : `${chars.slice(0, limit).join('').trimEnd()}…`;
}

/** Text that stays one table cell: a `|` would end it and a line break the whole row. */
export function escapeCell(text: string): string {
  return escapeMarkdown(text.trim())
    .replace(/\|/g, '\\|')
    .replace(/\r\n|\r|\n/g, '<br>');
}

// GitHub renders HTML in Markdown; a ticket's own `<` and `&` are shown as written.
function escapeMarkdown(text: string): string {
  return visibleKeepingLineBreaks(text).replace(/&/g, '&amp;').replace(/</g, '&lt;');
}

