import type { Reporter, ReporterKit } from '../reporter.js';
import { formatBatchTable } from '../batch-table.js';
import { formatProgress } from '../progress.js';
import { formatSummary } from '../summary.js';
import { makeVisible as visible } from '../../text/visible.js';

/**
 * `terminal`: each ticket's summary as it finishes, then the table, on stdout; one plain
 * line per meaningful event on stderr, readable in a terminal and in a CI log alike.
 */
export function terminalReporter(kit: ReporterKit): Reporter {
  return {
    name: 'terminal',
    ...terminalResults(kit),
    onEvent(ticketId, event) {
      const line = formatProgress(ticketId, event, kit.err);
      if (line) kit.screen.err(kit.redact(line));
    },
  };
}

/** What `terminal` and `live` both print on stdout; nothing when stdout carries JSON lines. */
export function terminalResults(kit: ReporterKit): Pick<Reporter, 'onBatchStart' | 'onRunEnd' | 'onSkipped' | 'onBatchEnd'> {
  if (kit.stdoutIsJson) return {};
  const c = kit.out;
  // The table is worth printing for a batch, for a shard that got no ticket (so its log
  // says so), and for a merge; one ticket's summary already says it all.
  let table = true;
  return {
    onBatchStart(batch) {
      table = batch.merged || batch.tickets !== 1;
    },
    onRunEnd(result) {
      const width = kit.stdout.isTTY ? kit.stdout.columns : undefined;
      kit.screen.out(`${kit.redact(formatSummary(result, c, kit.cwd, { redact: kit.redact, ...(width ? { width } : {}) }))}\n`);
    },
    onSkipped(report) {
      kit.screen.out(`${c.yellow.bold('⊘ SKIPPED')}  ${c.bold(visible(report.ticket.id))}  ${c.dim(visible(report.reason))}\n`);
    },
    onBatchEnd(report) {
      if (table) kit.screen.out(formatBatchTable(report, c));
    },
  };
}
