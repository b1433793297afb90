import { PerMessage } from './per-message.js';

/**
 * A running sum of `measure(item)` over a conversation: kept from one call to the next
 * (per-message.ts), so a call costs what was added or changed since the last. One per run
 * (or per model): nothing is shared between runs.
 */
export function createRunningSum<T extends object>(measure: (item: T) => number): (items: readonly T[]) => number {
  const kept = new PerMessage<T, number>(measure, (size) => size);
  return (items) => kept.over(items).size;
}

/** The length of `JSON.stringify(items)` for a conversation (see createRunningSum). */
export function createJsonSizer(): (items: readonly object[]) => number {
  const sum = createRunningSum<object>((item) => JSON.stringify(item).length);
  // The brackets, and a comma between items.
  return (items) => 2 + sum(items) + Math.max(0, items.length - 1);
}
