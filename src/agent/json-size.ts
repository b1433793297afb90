/**
 * A running sum of `measure(item)` over a list that only grows, without visiting counted
 * items again: a call costs what was added since the last. A conversation's messages are
 * never changed once in it; should the list be replaced or cut, it is counted afresh.
 * One per run (or per model): nothing is shared between runs.
 */
export function createAppendOnlySum<T>(measure: (item: T) => number): (items: readonly T[]) => number {
  let counted: readonly T[] | undefined;
  let count = 0;
  let last: T | undefined;
  let total = 0;
  return (items) => {
    if (items !== counted || items.length < count || (count > 0 && items[count - 1] !== last)) {
      counted = items;
      count = 0;
      total = 0;
    }
    for (; count < items.length; count++) total += measure(items[count]!);
    last = items[count - 1];
    return total;
  };
}

/** The length of `JSON.stringify(items)` for a conversation that only grows (see createAppendOnlySum). */
export function createJsonSizer(): (items: readonly object[]) => number {
  const sum = createAppendOnlySum<object>((item) => JSON.stringify(item).length);
  // The brackets, and a comma between items.
  return (items) => 2 + sum(items) + Math.max(0, items.length - 1);
}
