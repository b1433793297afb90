/**
 * The length of `JSON.stringify(items)` for a conversation that only grows, without
 * serialising it again on every turn: items already counted are not visited again, so a
 * turn costs the size of what it added. A message is never changed once it is in the
 * conversation; should the list be replaced or cut, it is counted afresh.
 * One sizer per run (or per model): nothing is shared between runs.
 */
export function createJsonSizer(): (items: readonly object[]) => number {
  let counted: readonly object[] | undefined;
  let count = 0;
  let last: object | undefined;
  let total = 0;
  return (items) => {
    if (items !== counted || items.length < count || (count > 0 && items[count - 1] !== last)) {
      counted = items;
      count = 0;
      total = 0;
    }
    for (; count < items.length; count++) total += JSON.stringify(items[count]).length;
    last = items[count - 1];
    // The brackets, and a comma between items.
    return 2 + total + Math.max(0, items.length - 1);
  };
}
