import type { RunEvent } from '../../trace/events.js';
import { LiveView } from '../live-view.js';
import { formatProgress } from '../progress.js';
import type { Reporter, ReporterKit } from '../reporter.js';
import { terminalResults } from './terminal.js';

// What the running line already shows; the rest (denials, asks, hooks, warnings, host
// changes) still scrolls above it as a plain line.
const SHOWN_LIVE = new Set<RunEvent['type']>(['policy', 'worktree', 'sandbox', 'model_response', 'setup', 'check', 'fence']);

/**
 * `live`: one line per running ticket at the bottom of stderr's terminal, redrawn in
 * place, with the summaries and the table of `terminal` scrolling above it.
 */
export function liveReporter(kit: ReporterKit): Reporter {
  const results = terminalResults(kit);
  // Drawn from the batch's start, not when built: building a set must start no timer.
  let view: LiveView | undefined;
  const takeDown = (): void => {
    if (!view) return;
    view.close();
    kit.screen.undraw(view);
    view = undefined;
  };
  return {
    name: 'live',
    onBatchStart(batch) {
      results.onBatchStart?.(batch);
      if (batch.merged || view) return;
      view = new LiveView({ out: kit.stderr, c: kit.err });
      kit.screen.draw(view);
    },
    onRunStart(ticketId) {
      view?.started(ticketId);
    },
    onEvent(ticketId, event) {
      view?.event(ticketId, event);
      if (SHOWN_LIVE.has(event.type) && !(event.type === 'sandbox' && event.warning)) return;
      const line = formatProgress(ticketId, event, kit.err);
      if (line) kit.screen.err(kit.redact(line));
    },
    onRunEnd(result, report) {
      view?.finished(result.ticket.id);
      results.onRunEnd?.(result, report);
    },
    onSkipped: results.onSkipped,
    close: takeDown,
    onBatchEnd(report) {
      takeDown();
      return results.onBatchEnd?.(report);
    },
  };
}
