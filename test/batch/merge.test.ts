import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeReports, readBatchReport } from '../../src/batch/merge.js';
import { totalsOf, type TicketReport } from '../../src/report/batch-report.js';
import { UsageError } from '../../src/errors.js';
import { sampleRun, sampleSkipped } from '../support/batch-reports.js';
import { tempDir } from '../support/repo.js';

const dir = tempDir('corral-merge-');

/** A shard's report file: its ticket lines, then (unless cut) its totals. */
function reportFile(name: string, tickets: TicketReport[], shard?: { index: number; count: number }, options: { cut?: boolean; totalsTickets?: number } = {}): string {
  const totals = { ...totalsOf(tickets, 1000, shard ? [shard] : []), ...(options.totalsTickets === undefined ? {} : { tickets: options.totalsTickets }) };
  const lines = [...tickets.map((t) => JSON.stringify(t)), ...(options.cut ? [] : [JSON.stringify(totals)])];
  const file = path.join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

const a = sampleRun({ ticket: { id: 'a', file: '/repo/tickets/a.yaml' } });
const b = sampleRun({ ticket: { id: 'b', file: '/repo/tickets/b.yaml' }, status: 'failed', exitCode: 1, reason: 'checks failed' });
const c = sampleSkipped('c', 'max_usd', 'no money left');

describe('report merge', () => {
  it('joins shards into one report with recomputed totals and the most severe exit code', async () => {
    const merged = mergeReports(await Promise.all([reportFile('m1', [b], { index: 1, count: 2 }), reportFile('m2', [a, c], { index: 2, count: 2 })].map((f) => readBatchReport(f))));
    expect(merged.gaps).toEqual([]);
    expect(merged.tickets.map((t) => t.ticket.id)).toEqual(['a', 'b', 'c']);
    expect(merged.totals).toMatchObject({ tickets: 3, byStatus: { passed: 1, failed: 1, skipped: 1 }, exitCode: 3, shards: [{ index: 1, count: 2 }, { index: 2, count: 2 }] });
  });

  it('names a missing shard, a report cut short and a report missing lines, and exits 64', async () => {
    const missing = mergeReports([await readBatchReport(reportFile('g1', [a], { index: 1, count: 3 }))]);
    expect(missing.gaps).toEqual([expect.stringContaining('no report for shards 2/3, 3/3')]);
    expect(missing.totals.exitCode).toBe(64);
    const cut = mergeReports([await readBatchReport(reportFile('g2', [a], undefined, { cut: true }))]);
    expect(cut.gaps).toEqual([expect.stringContaining('ends without its totals line')]);
    const short = mergeReports([await readBatchReport(reportFile('g3', [a], undefined, { totalsTickets: 2 }))]);
    expect(short.gaps).toEqual([expect.stringContaining('has 1 ticket line but its totals count 2')]);
    expect(short.totals.exitCode).toBe(64);
  });

  it('refuses reports that overlap or come from different shard counts', async () => {
    const overlap = [reportFile('o1', [a], { index: 1, count: 2 }), reportFile('o2', [a], { index: 2, count: 2 })];
    expect(() => mergeReports([]).totals).not.toThrow();
    await expect(Promise.all(overlap.map((f) => readBatchReport(f))).then(mergeReports)).rejects.toThrow(UsageError);
    const mixed = mergeReports(await Promise.all([reportFile('x1', [a], { index: 1, count: 2 }), reportFile('x2', [b], { index: 1, count: 3 })].map((f) => readBatchReport(f))));
    expect(mixed.gaps).toEqual([expect.stringContaining('different shard counts')]);
  });

  it('refuses a line that lacks what the reports read, naming the file, line and field', async () => {
    const file = path.join(dir, 'bad.jsonl');
    const { checks: _dropped, ...noChecks } = b;
    writeFileSync(file, `${JSON.stringify(a)}\n${JSON.stringify(noChecks)}\n`);
    const error = await readBatchReport(file, 'bad.jsonl').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).problems).toEqual([expect.objectContaining({ file: 'bad.jsonl', line: 2, field: 'checks' })]);
  });
});
