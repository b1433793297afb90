import type { Reporter, ReporterKit } from '../reporter.js';

/**
 * `json`: JSON lines on stdout and nothing else, one object per ticket as it finishes,
 * then the totals. This is the batch report `corral report merge` reads back.
 */
export function jsonReporter(kit: ReporterKit): Reporter {
  const line = (value: unknown): void => kit.screen.out(`${JSON.stringify(value)}\n`);
  let merged = false;
  return {
    name: 'json',
    onBatchStart(batch) {
      merged = batch.merged;
    },
    onRunEnd(_result, report) {
      line(report);
    },
    onSkipped(report) {
      line(report);
    },
    onBatchEnd(report) {
      // A merge ran nothing, so no ticket was printed as it finished.
      if (merged) for (const ticket of report.tickets) line(ticket);
      line(report.totals);
    },
  };
}
