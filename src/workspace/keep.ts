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
 * Commits the snapshot as one commit on top of the base and points a branch at it in the
 * host repository (worktrees share refs). Whatever the agent committed is folded in. The
 * branch is `branch` unless git could not put it there: a branch someone has checked out
 * is never moved under them, and a ref name cannot be both a branch and a folder of
 * branches (a `corral` branch blocks `corral/<id>`, a `corral/<id>/x` blocks `corral/<id>`).
 * The result then goes to the first of `<branch>-<suffix>` and that name with its slashes
 * made dashes that is free, and `detour` says why. `unchanged`: the snapshot lists no
 * change against the base (then its tree is the base's, no `write-tree`).
 */
export async function commitToBranch(
  snapshot: Snapshot,
  branch: string,
  message: string,
  suffix: string,
  options: { unchanged?: boolean } = {},
): Promise<{ branch: string; commit: string; detour?: string }> {
  // The host repository, not the worktree: the worktree may be on its way out by now, and
  // the objects, the refs and the snapshot's index are all reachable from the host.
  const cwd = snapshot.worktree.repo;
  // A snapshot that lists no change against the base has the base's tree.
  const makeCommit = async (): Promise<string> => {
    const tree = options.unchanged ? `${snapshot.worktree.baseCommit}^{tree}` : (await git(cwd, ['write-tree'], { env: snapshot.env })).stdout.trim();
    return (await git(cwd, ['commit-tree', tree, '-p', snapshot.worktree.baseCommit, '-F', '-'], { input: message })).stdout.trim();
  };
  // Which branches are checked out and which could be in the way are asked while git writes the commit.
  const topFolder = branch.split('/')[0]!;
  const [commit, checkedOut, nearby] = await Promise.all([makeCommit(), checkedOutBranches(cwd), branchesUnder(cwd, topFolder)]);
  const candidates = [branch, `${branch}-${suffix}`, `${branch.replaceAll('/', '-')}-${suffix}`];
  let detour: string | undefined;
  let target: string | undefined;
  for (const name of candidates) {
    const blocker = checkedOut.includes(`refs/heads/${name}`) ? 'is checked out' : blockingBranch(name, nearby);
    if (blocker === undefined) {
      target = name;
      break;
    }
    detour ??= blocker === 'is checked out' ? `branch ${name} is checked out` : `branch ${blocker} exists, so git cannot make a branch ${name}`;
  }
  if (target === undefined) throw new Error(`no branch name is free for the result: ${candidates.join(', ')} (${detour})`);
  await git(cwd, ['update-ref', '-m', 'corral: run passed', `refs/heads/${target}`, commit]);
  return target === branch ? { branch: target, commit } : { branch: target, commit, detour: `${detour}; the result is on branch ${target} instead` };
}

/** The branch (short name) whose ref would clash with a branch `name` as file and folder, if any. */
function blockingBranch(name: string, existing: string[]): string | undefined {
  return existing.find((other) => name.startsWith(`${other}/`) || other.startsWith(`${name}/`));
}

/** Every branch named `folder` or inside it, as short names (`--format` never quotes). */
async function branchesUnder(repo: string, folder: string): Promise<string[]> {
  // A pattern without wildcards matches the ref itself and everything below it.
  const listed = await git(repo, ['for-each-ref', '--format=%(refname)', '--end-of-options', `refs/heads/${folder}`]);
  return listed.stdout.split('\n').filter((ref) => ref !== '').map((ref) => ref.slice('refs/heads/'.length));
}

/** The branch each worktree of `repo` has checked out, the main one's too, as git lists them (`branch` lines). */
async function checkedOutBranches(repo: string): Promise<string[]> {
  return (await listWorktrees(repo)).flatMap((worktree) => worktree.branch ?? []);
}
