import { rmSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git, gitPaths } from '../git/git.js';
import { trackLeftover } from '../proc/leftovers.js';
import { scratchTempPrefix } from '../proc/owner.js';

/** What the host checkout holds that its HEAD does not, as `git status` counts it. */
export interface UncommittedCounts {
  /** Tracked files whose working copy differs from the index. */
  modified: number;
  /** Paths whose index entry differs from HEAD. */
  staged: number;
  /** Files git does not track and does not ignore. */
  untracked: number;
}

/**
 * Counts `XY path` fields of `git status --porcelain` (as the host state records them:
 * `XY\0path…`); ignored ones (`!!`) are not the user's work.
 */
export function countUncommitted(statusLines: string[]): UncommittedCounts {
  const counts: UncommittedCounts = { modified: 0, staged: 0, untracked: 0 };
  for (const line of statusLines) {
    const [x = ' ', y = ' '] = line.slice(0, 2);
    if (x === '!' && y === '!') continue;
    if (x === '?' && y === '?') counts.untracked += 1;
    else {
      if (x !== ' ') counts.staged += 1;
      if (y !== ' ') counts.modified += 1;
    }
  }
  return counts;
}

/** "3 modified, 1 staged, 1 untracked"; the kinds with none are left out. */
export function describeUncommitted(counts: UncommittedCounts): string {
  return (['modified', 'staged', 'untracked'] as const).filter((kind) => counts[kind] > 0).map((kind) => `${counts[kind]} ${kind}`).join(', ');
}

/**
 * A commit of the host's working tree as `git add --all` would stage it (tracked changes,
 * what is staged, untracked files the repository does not ignore), on top of HEAD: the
 * base of a run that starts from the working tree. Made with a private copy of the index,
 * so the host's index, refs and files stay exactly as they were; only objects are added.
 */
export async function commitWorkingTree(repo: string, head: string): Promise<string> {
  const tempDir = await mkdtemp(path.join(tmpdir(), scratchTempPrefix('index')));
  const forget = trackLeftover(() => rmSync(tempDir, { recursive: true, force: true }));
  try {
    const paths = await gitPaths(repo);
    const indexFile = path.join(tempDir, 'index');
    // The host's index as the start: what is staged, and git's stat cache (fewer files hashed).
    const copied = await copyFile(paths.index, indexFile).then(
      () => true,
      () => false,
    );
    const env = { GIT_INDEX_FILE: indexFile };
    if (!copied) await git(repo, ['read-tree', head], { env });
    // corral's own run records are never part of the user's work.
    await git(repo, ['add', '--all', '--', '.', ':(top,exclude,literal).corral'], { env });
    const tree = (await git(repo, ['write-tree'], { env })).stdout.trim();
    const message = `corral: the working tree of ${repo}\n\nUncommitted changes of the host checkout, as the base of a run (--from-worktree).\n`;
    return (await git(repo, ['commit-tree', tree, '-p', head, '-F', '-'], { input: message })).stdout.trim();
  } finally {
    await rm(tempDir, { recursive: true, force: true });
    forget();
  }
}
