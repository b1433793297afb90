import { describe, expect, it } from 'vitest';
import { scheduleBatch, type BatchItem, type ItemOutcome } from '../../src/batch/schedule.js';

interface Item extends BatchItem {
  outcome?: Partial<ItemOutcome>;
}

/** Runs `items` with runs that finish when the test says, recording starts, ends and skips in order. */
function harness(items: Item[]) {
  const log: string[] = [];
  const pending = new Map<string, () => void>();
  let running = 0;
  let peak = 0;
  const run = (item: Item): Promise<ItemOutcome> =>
    new Promise((resolve) => {
      running++;
      peak = Math.max(peak, running);
      log.push(`start ${item.id}`);
      pending.set(item.id, () => {
        running--;
        log.push(`end ${item.id}`);
        resolve({ failed: false, costUsd: 0, ...item.outcome });
      });
    });
  const skip = (item: Item, cause: string) => log.push(`skip ${item.id} ${cause}`);
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const finish = async (id: string) => {
    await tick();
    pending.get(id)!();
    pending.delete(id);
    await tick();
  };
  return { log, run, skip, finish, peak: () => peak };
}

describe('scheduleBatch', () => {
  it('runs at most `jobs` at once, in order', async () => {
    const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
    const h = harness(items);
    const done = scheduleBatch(items, { jobs: 2, run: h.run, skip: h.skip });
    for (const id of ['a', 'b', 'c', 'd', 'e']) await h.finish(id);
    await done;
    expect(h.peak()).toBe(2);
    expect(h.log).toEqual(['start a', 'start b', 'end a', 'start c', 'end b', 'start d', 'end c', 'start e', 'end d', 'end e']);
  });

  it('with bail, starts nothing after a failure but lets running ones finish', async () => {
    const items: Item[] = [{ id: 'a', outcome: { failed: true } }, { id: 'b' }, { id: 'c' }, { id: 'd' }];
    const h = harness(items);
    const done = scheduleBatch(items, { jobs: 2, bail: true, run: h.run, skip: h.skip });
    await h.finish('a');
    await h.finish('b');
    await done;
    expect(h.log).toEqual(['start a', 'start b', 'end a', 'skip c bail', 'skip d bail', 'end b']);
  });

  it('under a dollar cap, holds each running ticket\'s cap, waits for it to come back, and skips what can never fit', async () => {
    const items: Item[] = [
      { id: 'a', budgetUsd: 0.6, outcome: { costUsd: 0.5 } },
      { id: 'b', budgetUsd: 0.4, outcome: { costUsd: 0.1 } },
      { id: 'c', budgetUsd: 0.5 },
      { id: 'd', budgetUsd: 0.3, outcome: { costUsd: null } },
      { id: 'e', budgetUsd: 0.2 },
    ];
    const h = harness(items);
    const done = scheduleBatch(items, { jobs: 4, maxUsd: 1, run: h.run, skip: h.skip });
    // a and b hold 1.0 between them: c waits. When a ends having spent 0.5, 0.5 - 0.4 held = 0.1 is left; c still waits.
    await h.finish('a');
    // b ends having spent 0.1: 0.4 left, nothing running, so c (0.5) is skipped and d (0.3) starts.
    await h.finish('b');
    // d's cost is unknown: its whole cap counts as spent, leaving 0.1 < e's 0.2.
    await h.finish('d');
    await done;
    expect(h.log).toEqual(['start a', 'start b', 'end a', 'end b', 'skip c max_usd', 'start d', 'end d', 'skip e max_usd']);
  });

  it('once the signal is aborted, skips the rest as interrupted', async () => {
    const items = ['a', 'b', 'c'].map((id) => ({ id }));
    const h = harness(items);
    const abort = new AbortController();
    const done = scheduleBatch(items, { jobs: 1, signal: abort.signal, run: h.run, skip: h.skip });
    abort.abort();
    await h.finish('a');
    await done;
    expect(h.log).toEqual(['start a', 'end a', 'skip b interrupted', 'skip c interrupted']);
  });

  it('rethrows a run that threw, after the others have ended', async () => {
    const items = ['a', 'b'].map((id) => ({ id }));
    const log: string[] = [];
    const done = scheduleBatch(items, {
      jobs: 2,
      run: async (item) => {
        if (item.id === 'a') throw new Error('boom');
        await new Promise((resolve) => setTimeout(resolve, 20));
        log.push('b ended');
        return { failed: false, costUsd: 0 };
      },
      skip: () => undefined,
    });
    await expect(done).rejects.toThrow('boom');
    expect(log).toEqual(['b ended']);
  });
});
