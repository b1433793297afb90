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
 * The snapshot as one commit on top of the base, made in the host repository (worktrees
 * share objects): whatever the agent committed is folded in. A snapshot that staged
 * nothing has the base's tree, so no `write-tree`. The commit is only an object until
 * `commitToBranch` points a branch at it: made ahead (while the fence is read and the
 * patch written), a run that then does not pass leaves it unreferenced, like the blobs
 * its snapshot already wrote, for git's gc. git reads the snapshot's index meanwhile: the
 * snapshot is disposed of only once this has settled.
 */
export async function commitSnapshot(snapshot: Snapshot, message: string): Promise<string> {
  // The host repository, not the worktree: the worktree may be on its way out by now, and
  // the objects, the refs and the snapshot's index are all reachable from the host.
  const cwd = snapshot.worktree.repo;
  const tree = snapshot.staged ? (await git(cwd, ['write-tree'], { env: snapshot.env })).stdout.trim() : `${snapshot.worktree.baseCommit}^{tree}`;
  return (await git(cwd, ['commit-tree', tree, '-p', snapshot.worktree.baseCommit, '-F', '-'], { input: message })).stdout.trim();
}

/**
 * Points a branch in the host repository at the result commit (`commit`, or one made now
 * from the snapshot with `message`). The branch is `branch` unless it cannot go there
 * without taking something from someone: a branch someone has checked out is never moved
 * under them; a branch whose tip is not a corral result of this ticket (`ticketId`) holds
 * someone's commits and is never moved; a ref name cannot be both a branch and a folder
 * of branches (a `corral` branch blocks `corral/<id>`, a `corral/<id>/x` blocks
 * `corral/<id>`); and a run of the same ticket that moved it first, at the same time,
 * wins it (each move is a compare-and-swap against the tip read before). The result then
 * goes to the first of `<branch>-<suffix>` and that name with its slashes made dashes
 * that is free (created only if still absent), and `detour` says why.
 */
export async function commitToBranch(
  snapshot: Snapshot,
  branch: string,
  message: string,
  suffix: string,
  options: { commit?: Promise<string>; ticketId?: string; tipAtStart?: string | null } = {},
): Promise<{ branch: string; commit: string; detour?: string }> {
  const cwd = snapshot.worktree.repo;
  // Which branches are checked out and which could be in the way are asked while git writes the commit.
  const topFolder = branch.split('/')[0]!;
  const [commit, checkedOut, nearby] = await Promise.all([options.commit ?? commitSnapshot(snapshot, message), checkedOutBranches(cwd), branchesUnder(cwd, topFolder)]);
  const noCommit = '0'.repeat(commit.length);
  const candidates = [branch, `${branch}-${suffix}`, `${branch.replaceAll('/', '-')}-${suffix}`];
  const reasons: string[] = [];
  for (const [index, name] of candidates.entries()) {
    const existing = nearby.find((entry) => entry.name === name);
    const blocker = checkedOut.includes(`refs/heads/${name}`) ? `branch ${name} is checked out` : blockingBranch(name, nearby);
    if (blocker !== undefined) {
      reasons.push(blocker);
      continue;
    }
    // A branch made or moved since this run began is another run's result, made at the same time.
    if (index === 0 && options.tipAtStart !== undefined && (existing?.commit ?? null) !== options.tipAtStart) {
      reasons.push(`branch ${name} was ${options.tipAtStart === null ? 'made' : 'moved'} by someone else (another run of this ticket?) during this run`);
      continue;
    }
    // Only the first name may be moved, and only from a result of this very ticket; the
    // fallback names are this run's own, so they are only ever created.
    if (existing !== undefined && (index > 0 || !isResultOf(existing.message, options.ticketId))) {
      reasons.push(`branch ${name} holds commits corral did not make for this ticket (tip ${existing.commit.slice(0, 12)}), so it was not moved`);
      continue;
    }
    const moved = await git(cwd, ['update-ref', '-m', 'corral: run passed', `refs/heads/${name}`, commit, existing?.commit ?? noCommit], { allowFailure: true });
    if (moved.exitCode === 0) {
      return index === 0 ? { branch: name, commit } : { branch: name, commit, detour: `${reasons[0]}; the result is on branch ${name} instead` };
    }
    reasons.push(`branch ${name} was moved by someone else (another run of this ticket?) while this run was committing`);
  }
  throw new Error(`no branch name is free for the result: ${candidates.join(', ')} (${reasons.join('; ')})`);
}

/** Whether a commit message is a corral result of ticket `ticketId` (its `Ticket:` trailer); any ticket's when none is named. */
function isResultOf(message: string, ticketId: string | undefined): boolean {
  if (!message.startsWith('corral: ')) return false;
  const trailer = /^Ticket: (.*)$/m.exec(message)?.[1];
  return trailer !== undefined && (ticketId === undefined || trailer === ticketId);
}

interface BranchTip {
  /** The short name. */
  name: string;
  commit: string;
  /** The tip commit's message. */
  message: string;
}

/** The branch (short name) whose ref would clash with a branch `name` as file and folder, if any. */
function blockingBranch(name: string, existing: BranchTip[]): string | undefined {
  const other = existing.find((entry) => name.startsWith(`${entry.name}/`) || entry.name.startsWith(`${name}/`))?.name;
  return other === undefined ? undefined : `branch ${other} exists, so git cannot make a branch ${name}`;
}

/** Every branch named `folder` or inside it, with its tip and the tip's message. */
async function branchesUnder(repo: string, folder: string): Promise<BranchTip[]> {
  // A pattern without wildcards matches the ref itself and everything below it. A message
  // never holds a NUL, so NUL-separated fields are unambiguous.
  const listed = await git(repo, ['for-each-ref', '--format=%(refname)%00%(objectname)%00%(contents)%00', '--end-of-options', `refs/heads/${folder}`]);
  const fields = listed.stdout.split('\0');
  const tips: BranchTip[] = [];
  for (let i = 0; i + 2 < fields.length; i += 3) {
    // Each record after the first starts with the newline that ended the one before.
    const ref = fields[i]!.replace(/^\n/, '');
    tips.push({ name: ref.slice('refs/heads/'.length), commit: fields[i + 1]!, message: fields[i + 2]! });
  }
  return tips;
}

/** The branch each worktree of `repo` has checked out, the main one's too, as git lists them (`branch` lines). */
async function checkedOutBranches(repo: string): Promise<string[]> {
  return (await listWorktrees(repo)).flatMap((worktree) => worktree.branch ?? []);
}
