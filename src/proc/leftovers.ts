// What a run has made that must not outlive it: its worktree, its temp dir, the process
// groups of its commands. A normal run removes each itself; a second Ctrl-C exits at
// once, so everything still here is removed synchronously on the way out.

const live = new Map<number, () => void>();
let next = 0;

/** Registers a synchronous clean-up; the returned function forgets it (call it once the thing is gone). */
export function trackLeftover(cleanUp: () => void): () => void {
  const id = next++;
  live.set(id, cleanUp);
  return () => live.delete(id);
}

/** Runs every registered clean-up now, newest first; a failing one never stops the others. */
export function cleanUpLeftoversNow(): void {
  for (const [id, cleanUp] of [...live.entries()].reverse()) {
    try {
      cleanUp();
    } catch {
      // Best effort on the way out: the next run prunes what is left.
    }
    live.delete(id);
  }
}
