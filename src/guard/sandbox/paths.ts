/** `inner` is `outer` or lies below it. */
export function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
}

/** How many folders deep `p` is: `/` 0, `/tmp` 1, `/tmp/x` 2. */
export function depthOf(p: string): number {
  return p.split('/').filter((part) => part !== '').length;
}
