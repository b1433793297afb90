import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { GitMetadata } from '../../policy/protected-paths.js';
import { resolvePhysical } from './resolve.js';

/** The worktree's git metadata: its `.git` entry, and the gitdir and common dir a linked worktree's `.git` file names. */
export function gitMetadataOf(worktree: string): GitMetadata {
  const dotGit = path.join(worktree, '.git');
  const dirs = [dotGit];
  try {
    const pointer = /^gitdir:\s*(.+)$/m.exec(readFileSync(dotGit, 'utf8'))?.[1]?.trim();
    if (pointer !== undefined) {
      const gitdir = path.resolve(worktree, pointer);
      dirs.push(gitdir);
      const common = readFileSync(path.join(gitdir, 'commondir'), 'utf8').trim();
      dirs.push(path.resolve(gitdir, common));
    }
  } catch {
    // A plain repository: `.git` is the directory itself.
  }
  return { dirs: dirs.map((dir) => safeReal(dir)) };
}

function safeReal(dir: string): string {
  try {
    return resolvePhysical(dir, '/');
  } catch {
    return dir;
  }
}
