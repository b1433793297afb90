import { git, gitBytes } from './git.js';
import type { Snapshot } from './changes.js';

/**
 * The snapshot as a patch against the base commit: untracked and binary files included,
 * applicable with `git apply` on the base. Bytes, so no encoding is ever guessed.
 */
export async function diffSnapshot(snapshot: Snapshot): Promise<Buffer> {
  return gitBytes(
    snapshot.worktree.dir,
    ['diff-index', '--cached', '--patch', '--binary', '--full-index', '--no-ext-diff', '--no-color', snapshot.worktree.baseCommit],
    { env: snapshot.env },
  );
}

/**
 * Commits the snapshot as one commit on top of the base and points `branch` at it in the
 * host repository (worktrees share refs). Whatever the agent committed is folded in. A
 * branch someone has checked out is never moved under them: the result then goes to
 * `<branch>-<suffix>` instead. Returns the branch used and the commit.
 */
export async function commitToBranch(
  snapshot: Snapshot,
  branch: string,
  message: string,
  suffix: string,
): Promise<{ branch: string; commit: string }> {
  const cwd = snapshot.worktree.dir;
  const tree = (await git(cwd, ['write-tree'], { env: snapshot.env })).stdout.trim();
  const commit = (await git(cwd, ['commit-tree', tree, '-p', snapshot.worktree.baseCommit, '-F', '-'], { input: message })).stdout.trim();
  const checkedOut = (await git(cwd, ['worktree', 'list', '--porcelain'])).stdout
    .split('\n')
    .filter((line) => line.startsWith('branch '))
    .map((line) => line.slice('branch '.length));
  const target = checkedOut.includes(`refs/heads/${branch}`) ? `${branch}-${suffix}` : branch;
  await git(cwd, ['update-ref', '-m', 'corral: run passed', `refs/heads/${target}`, commit]);
  return { branch: target, commit };
}
