// What a run has made that must not outlive it: its worktree, its temp dir, the process
// groups of its commands. A normal run removes each itself; a second Ctrl-C exits at
// once, so everything still here is dealt with synchronously on the way out (a worktree's
// work saved to a patch before it goes).

const live = new Map<number, () => string | void>();
let next = 0;

/**
 * Registers a synchronous clean-up, which may return a line for the person (where the
 * work went); the returned function forgets it (call it once the thing is gone).
 */
export function trackLeftover(cleanUp: () => string | void): () => void {
  const id = next++;
  live.set(id, cleanUp);
  return () => live.delete(id);
}

/** Runs every registered clean-up now, newest first; a failing one never stops the others. Returns what they said. */
export function cleanUpLeftoversNow(): string[] {
  const said: string[] = [];
  for (const [id, cleanUp] of [...live.entries()].reverse()) {
    try {
      const line = cleanUp();
      if (typeof line === 'string') said.push(line);
    } catch (error) {
      // Best effort on the way out: the next run or `corral clean` salvages what is left.
      said.push(`clean-up failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    live.delete(id);
  }
  return said;
}
