import { git, gitBytes, listWorktrees } from '../git/git.js';
import type { Snapshot } from './changes.js';

/**
 * The snapshot as a patch against the base commit: untracked and binary files included,
 * applicable with `git apply` on the base. Bytes, so no encoding is ever guessed.
 */
export async function diffSnapshot(snapshot: Snapshot): Promise<Buffer> {
  return gitBytes(
    snapshot.worktree.dir,
    ['diff-index', '--cached', '--patch', '--binary', '--full-index', '--no-ext-diff', '--no-textconv', '--no-color', snapshot.worktree.baseCommit],
    { env: snapshot.env },
  );
}

/**
 * Commits the snapshot as one commit on top of the base and points `branch` at it in the
 * host repository (worktrees share refs). Whatever the agent committed is folded in. A
 * branch someone has checked out is never moved under them: the result then goes to
 * `<branch>-<suffix>` instead. Returns the branch used and the commit. `unchanged`: the
 * snapshot lists no change against the base (then its tree is the base's, no `write-tree`).
 */
export async function commitToBranch(
  snapshot: Snapshot,
  branch: string,
  message: string,
  suffix: string,
  options: { unchanged?: boolean } = {},
): Promise<{ branch: string; commit: string }> {
  // The host repository, not the worktree: the worktree may be on its way out by now, and
  // the objects, the refs and the snapshot's index are all reachable from the host.
  const cwd = snapshot.worktree.repo;
  // A snapshot that lists no change against the base has the base's tree.
  const makeCommit = async (): Promise<string> => {
    const tree = options.unchanged ? `${snapshot.worktree.baseCommit}^{tree}` : (await git(cwd, ['write-tree'], { env: snapshot.env })).stdout.trim();
    return (await git(cwd, ['commit-tree', tree, '-p', snapshot.worktree.baseCommit, '-F', '-'], { input: message })).stdout.trim();
  };
  // Which branches are checked out is asked while git writes the commit.
  const [commit, checkedOut] = await Promise.all([makeCommit(), checkedOutBranches(snapshot.worktree.repo)]);
  const target = checkedOut.includes(`refs/heads/${branch}`) ? `${branch}-${suffix}` : branch;
  await git(cwd, ['update-ref', '-m', 'corral: run passed', `refs/heads/${target}`, commit]);
  return { branch: target, commit };
}

/** The branch each worktree of `repo` has checked out, the main one's too, as git lists them (`branch` lines). */
async function checkedOutBranches(repo: string): Promise<string[]> {
  return (await listWorktrees(repo)).flatMap((worktree) => worktree.branch ?? []);
}
