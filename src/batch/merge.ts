import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { EXIT, UsageError, type Problem } from '../errors.js';
import { RUN_STATUSES } from '../trace/outcome.js';
import { REPORT_VERSION, completeRunLine, ticketRef } from '../report/json.js';
import { sortTicketReports, totalsOf, type BatchReport, type JsonTotals, type ShardSpec, type TicketReport } from '../report/batch-report.js';

// `corral report merge`: the JSON reports of a CI matrix's shards joined into one, as if one
// machine had run the whole folder. A shard whose report is missing or cut short is said
// plainly and fails the merge's exit code: a green merge must mean every ticket ran.

/** One shard's report as read back: its ticket lines and, if it finished, its totals. */
export interface ReadReport {
  file: string;
  tickets: TicketReport[];
  totals?: JsonTotals;
}

export interface MergedReport extends BatchReport {
  /** What makes the merge incomplete: a report without totals, a shard of the matrix with no report. */
  gaps: string[];
}

// The fields the merge, the table, JUnit and GitHub outputs read; anything else is kept as is.
const count = z.number().int().nonnegative();
const usage = z.looseObject({ inputTokens: count, outputTokens: count, cacheReadTokens: count, cacheWriteTokens: count });
const ticketLine = z.looseObject({ id: z.string(), file: z.string(), title: z.string().nullable().optional() });
const LINE = z.discriminatedUnion('type', [
  z.looseObject({
    type: z.literal('run'),
    ticket: ticketLine,
    status: z.enum(RUN_STATUSES),
    exitCode: z.number().int(),
    reason: z.string(),
    model: z.string(),
    steps: count,
    usage,
    costUsd: z.number().nullable(),
    durationMs: z.number().nonnegative(),
    changes: z.array(z.looseObject({ change: z.looseObject({ path: z.string() }), allowed: z.boolean() })),
    checks: z.array(z.looseObject({ name: z.string(), passed: z.boolean(), exitCode: z.number().int().nullable(), timedOut: z.boolean(), durationMs: z.number(), output: z.string() })),
    denied: z.array(z.looseObject({ call: z.string(), rule: z.string(), reason: z.string() })),
    asked: z.array(z.looseObject({ call: z.string(), rule: z.string(), reason: z.string() })),
    followUps: z.array(z.string()),
    warnings: z.array(z.string()),
    trace: z.string(),
  }),
  z.looseObject({ type: z.literal('skipped'), ticket: ticketLine, status: z.literal('skipped'), cause: z.enum(['bail', 'max_usd', 'interrupted']), reason: z.string(), exitCode: z.number().int().nullable() }),
  z.looseObject({
    type: z.literal('totals'),
    tickets: count,
    exitCode: z.number().int(),
    durationMs: z.number().nonnegative(),
    shards: z.array(z.object({ index: z.number().int().positive(), count: z.number().int().positive() })),
  }),
]);

/** Reads a `corral run --json` output; any line that is not one of its objects is a problem with file and line. */
export async function readBatchReport(file: string, shown = file): Promise<ReadReport> {
  const text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read report ${shown}: ${error.code === 'ENOENT' ? 'no such file' : error.message}`);
  });
  const problems: Problem[] = [];
  const tickets: TicketReport[] = [];
  let totals: JsonTotals | undefined;
  const lines = text.split('\n');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    const at = (message: string): Problem => ({ file: shown, line: i + 1, column: 1, field: '', message });
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      problems.push(at('not JSON: a report is the output of `corral run --json` (one JSON object per line)'));
      return;
    }
    if (typeof value !== 'object' || value === null || (value as { corral?: unknown }).corral !== REPORT_VERSION) {
      problems.push(at(`not a corral report line (expected "corral": ${REPORT_VERSION})`));
      return;
    }
    const parsed = LINE.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      problems.push({ ...at(issue.message), field: issue.path.join('.') });
    } else if (parsed.data.type === 'totals') {
      if (totals) problems.push(at('a second totals line: is this two reports in one file?'));
      totals = value as JsonTotals;
    } else {
      if (totals) problems.push(at('a ticket after the totals line'));
      // Every field present, as `corral run --json` writes it now, whichever corral wrote the line.
      const line = parsed.data.type === 'run' ? completeRunLine(value as TicketReport & { type: 'run' }) : { ...(value as TicketReport), ticket: ticketRef(parsed.data.ticket) };
      tickets.push(line as TicketReport);
    }
  });
  if (problems.length > 0) throw new UsageError(`${shown} is not a corral report`, problems);
  return { file: shown, tickets, ...(totals ? { totals } : {}) };
}

/** Joins shard reports: every ticket once, totals recomputed, missing shards and unfinished reports named. */
export function mergeReports(reports: ReadReport[]): MergedReport {
  const seen = new Map<string, string>();
  const problems: Problem[] = [];
  for (const report of reports) {
    for (const ticket of report.tickets) {
      const earlier = seen.get(ticket.ticket.id);
      if (earlier !== undefined) problems.push({ file: report.file, line: 1, column: 1, field: 'ticket.id', message: `ticket ${ticket.ticket.id} is also in ${earlier}: were the shards cut with different --shard counts, or one report given twice?` });
      else seen.set(ticket.ticket.id, report.file);
    }
  }
  if (problems.length > 0) throw new UsageError('the reports overlap; nothing was merged', problems);

  const gaps: string[] = [];
  for (const report of reports) {
    if (!report.totals) gaps.push(`${report.file} ends without its totals line: that run did not finish, so its folder may not all have run`);
    else if (report.totals.tickets !== report.tickets.length) gaps.push(`${report.file} has ${report.tickets.length} ticket line${report.tickets.length === 1 ? '' : 's'} but its totals count ${report.totals.tickets}: lines are missing`);
  }
  const shards = reports.flatMap((report) => report.totals?.shards ?? []);
  gaps.push(...shardGaps(shards));

  const tickets = sortTicketReports(reports.flatMap((report) => report.tickets));
  const durationMs = Math.max(0, ...reports.map((report) => report.totals?.durationMs ?? 0));
  // Each shard's own extra codes (an interrupted shard's 130) live only in its totals.
  const shardCodes = reports.flatMap((report) => (report.totals ? [report.totals.exitCode] : []));
  const totals = totalsOf(tickets, durationMs, sortShards(shards), [...shardCodes, ...(gaps.length > 0 ? [EXIT.usage] : [])]);
  return { tickets, totals, gaps };
}

/** What is wrong with the set of shards the reports say they covered. */
function shardGaps(shards: ShardSpec[]): string[] {
  if (shards.length === 0) return [];
  const counts = [...new Set(shards.map((shard) => shard.count))];
  if (counts.length > 1) return [`the reports come from different shard counts (${counts.map((n) => `/${n}`).join(', ')}): they do not add up to one folder`];
  const count = counts[0]!;
  const gaps: string[] = [];
  const indices = shards.map((shard) => shard.index);
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((index) => !indices.includes(index));
  if (missing.length > 0) gaps.push(`no report for shard${missing.length === 1 ? '' : 's'} ${missing.map((index) => `${index}/${count}`).join(', ')}: its tickets are not in this merge`);
  const twice = [...new Set(indices.filter((index, i) => indices.indexOf(index) !== i))];
  if (twice.length > 0) gaps.push(`shard${twice.length === 1 ? '' : 's'} ${twice.map((index) => `${index}/${count}`).join(', ')} reported more than once`);
  return gaps;
}

function sortShards(shards: ShardSpec[]): ShardSpec[] {
  const unique = new Map(shards.map((shard) => [`${shard.index}/${shard.count}`, shard]));
  return [...unique.values()].sort((a, b) => a.count - b.count || a.index - b.index);
}

/** Report files as given on the command line, shown relative to cwd. */
export function shownPath(file: string, cwd: string): string {
  return path.relative(cwd, file) || file;
}
