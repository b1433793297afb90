import type { SkipCause } from '../report/batch-report.js';

// Which ticket of a batch starts when: at most `jobs` at once, in the order given, and
// none once the batch is told to stop. Pure scheduling: running a ticket and reporting
// are the caller's.

export interface BatchItem {
  /** Shown in skip reasons. */
  id: string;
  /** The ticket's own dollar cap; required when the batch has one (`--max-usd`). */
  budgetUsd?: number;
}

/** What a finished ticket tells the scheduler. */
export interface ItemOutcome {
  /** A ticket that did not pass: with --bail, nothing new starts after it. */
  failed: boolean;
  /** What it spent; null when unknown (then its whole cap counts as spent). */
  costUsd: number | null;
}

export interface ScheduleOptions<T extends BatchItem> {
  /** How many run at once (≥ 1). */
  jobs: number;
  /** Start nothing new after the first failure; running tickets finish. */
  bail?: boolean;
  /** The batch's dollar cap: a ticket starts only while what is left covers its own cap. */
  maxUsd?: number;
  /** Once aborted, nothing new starts. */
  signal?: AbortSignal;
  run(item: T): Promise<ItemOutcome>;
  skip(item: T, cause: SkipCause, reason: string): void;
}

// Sums of money compare with a cent's hundredth of slack, so 0.1 + 0.2 fits in 0.3.
const EPSILON = 1e-6;

/**
 * Runs every item or skips it, and resolves when all started ones have finished. Under a
 * dollar cap each running ticket holds its full cap until it ends, so parallel runs can
 * never together overspend; a ticket that does not fit waits while others run (their
 * unspent caps come back) and is skipped only when nothing is left to wait for.
 */
export async function scheduleBatch<T extends BatchItem>(items: T[], options: ScheduleOptions<T>): Promise<void> {
  const jobs = Math.max(1, Math.floor(options.jobs));
  const queue = [...items];
  const running = new Set<Promise<void>>();
  let spent = 0;
  let reserved = 0;
  let failure: string | undefined;
  let thrown: { error: unknown } | undefined;

  const skipRest = (cause: SkipCause, reason: string): void => {
    for (const item of queue.splice(0)) options.skip(item, cause, reason);
  };
  const start = (item: T): void => {
    const hold = item.budgetUsd ?? 0;
    reserved += hold;
    const done = options
      .run(item)
      .then(
        (outcome) => {
          spent += outcome.costUsd ?? hold;
          if (outcome.failed && failure === undefined) failure = item.id;
        },
        (error: unknown) => {
          // A ticket that threw counts as failed and as having spent its cap; the batch rethrows once all have ended.
          spent += hold;
          failure ??= item.id;
          thrown ??= { error };
        },
      )
      .finally(() => {
        reserved -= hold;
        running.delete(done);
      });
    running.add(done);
  };

  for (;;) {
    while (queue.length > 0 && running.size < jobs) {
      if (options.signal?.aborted) skipRest('interrupted', 'the batch was interrupted before this ticket started');
      else if (options.bail && failure !== undefined) skipRest('bail', `--bail: ${failure} did not pass, so no new ticket started`);
      else if (options.maxUsd !== undefined && !fits(queue[0]!, options.maxUsd - spent - reserved)) {
        if (running.size > 0) break;
        const item = queue.shift()!;
        const left = Math.max(0, options.maxUsd - spent);
        options.skip(item, 'max_usd', `--max-usd ${money(options.maxUsd)}: ${money(left)} left, and this ticket's budget.usd is ${money(item.budgetUsd ?? 0)}`);
      } else start(queue.shift()!);
    }
    if (running.size === 0) {
      if (queue.length === 0) break;
      continue;
    }
    await Promise.race(running);
  }
  if (thrown) throw thrown.error;
}

function fits(item: BatchItem, left: number): boolean {
  return (item.budgetUsd ?? 0) <= left + EPSILON;
}

function money(usd: number): string {
  return `$${usd.toFixed(2)}`;
}
