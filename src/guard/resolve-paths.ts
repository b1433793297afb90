import { realpath } from 'node:fs/promises';
import path from 'node:path';

/**
 * Resolves a path the way the OS will when the tool opens it: against the worktree when
 * relative, `..` folded, and symlinks followed for the deepest part that exists (a file
 * about to be created resolves through its existing parent directories).
 */
export async function resolveRealPath(given: string, worktree: string): Promise<string> {
  const absolute = path.resolve(worktree, given);
  const missing: string[] = [];
  let current = absolute;
  for (;;) {
    try {
      const real = await realpath(current);
      return path.join(real, ...missing.reverse());
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}
