import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';

const MAX_LINK_HOPS = 40;

/**
 * Resolves a path the way the OS will when a tool opens it: against the worktree when
 * relative, `..` folded, every symlink followed, including a dangling one whose target
 * does not exist yet (a Write through it creates the target). Only a path that truly
 * does not exist is resolved through its existing parent; any other failure to look
 * (a loop, no permission) throws, so the caller denies rather than guesses.
 */
export async function resolveRealPath(given: string, worktree: string): Promise<string> {
  let absolute = path.resolve(worktree, given);
  for (let hop = 0; hop < MAX_LINK_HOPS; hop++) {
    try {
      return await realpath(absolute);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    // Something on the way does not exist: find the deepest part that does.
    const missing: string[] = [];
    let current = absolute;
    for (;;) {
      const parent = path.dirname(current);
      if (parent === current) return absolute;
      missing.unshift(path.basename(current));
      current = parent;
      const entry = await lstat(current).catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return null;
        throw error;
      });
      if (entry === null) continue;
      const realParent = await realpath(current);
      // The first missing name may itself be a dangling symlink: follow it.
      const first = path.join(realParent, missing[0]!);
      const firstEntry = await lstat(first).catch(() => null);
      if (firstEntry?.isSymbolicLink()) {
        absolute = path.resolve(realParent, await readlink(first), ...missing.slice(1));
        break;
      }
      return path.join(realParent, ...missing);
    }
  }
  throw new Error(`too many levels of symbolic links: ${given}`);
}
