import { rmSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { git, gitPaths, gitSync, listWorktrees } from '../git/git.js';
import { trackLeftover } from '../proc/leftovers.js';
import { withWorktreeLock } from './worktree-lock.js';

/** A throwaway checkout of the host repository at a recorded base commit. */
export interface Worktree {
  /** Top directory of the host repository. */
  repo: string;
  /** Absolute real path of the worktree, outside the host checkout. */
  dir: string;
  /** The commit the worktree started from; the fence and the patch compare against it. */
  baseCommit: string;
  /** The worktree's own index file, as git named it when the worktree was made. */
  indexFile?: string;
  /**
   * The index git wrote for the checkout of the base, read before anything ran in the
   * worktree: the base's tree with a stat cache nobody else has touched. The fence starts
   * from it, never from the worktree's index as the run left it.
   */
  baseIndex?: { bytes: Buffer; mtimeMs: number };
}

const forget = new WeakMap<Worktree, () => void>();

/**
 * The lock reason corral writes: it names the process that owns the worktree, so a later
 * run or `corral clean` can tell a live run's worktree from one a killed run left.
 */
export function lockReason(pid = process.pid): string {
  return `corral pid=${pid} host=${hostname()}`;
}

/**
 * Makes a detached, locked worktree of `repo` at `baseCommit` in a fresh temp directory.
 * The lock keeps `git worktree prune` (ours or anyone's) off it while the run lives.
 */
export async function createWorktree(repo: string, baseCommit: string, label: string, options: { keep?: boolean } = {}): Promise<Worktree> {
  // Killed runs' leftovers are looked for while the folder is made, outside the lock: one
  // `git worktree list` in the usual case of nothing to clean, and no lock held for it.
  const [dir, leftovers] = await Promise.all([
    realpath(tmpdir()).then((parent) => mkdtemp(path.join(parent, `corral-${label.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}-`))),
    readWorktreeList(repo).then(
      (list) => list.prunable || list.corral.some((worktree) => worktree.stale),
      () => true,
    ),
  ]);
  try {
    await withWorktreeLock(repo, async () => {
      // Judged again under the lock: another run may have cleaned them up since.
      if (leftovers) await removeStaleWorktreesLocked(repo).catch(() => undefined);
      await git(repo, ['worktree', 'add', '--detach', '--lock', '--reason', lockReason(), '--quiet', dir, baseCommit]);
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  // Where its index is, asked of git now (and remembered for its later git calls), before
  // anything runs in it.
  const paths = await gitPaths(dir).catch(() => null);
  const indexFile = paths?.index;
  const baseIndex = indexFile === undefined ? undefined : await readBaseIndex(indexFile);
  const worktree: Worktree = { repo, dir, baseCommit, ...(indexFile ? { indexFile } : {}), ...(baseIndex ? { baseIndex } : {}) };
  // On a second Ctrl-C: removed, unless the person asked to keep it (then only unlocked, work intact).
  forget.set(worktree, trackLeftover(() => (options.keep ? unlockWorktreeSync(repo, dir) : removeWorktreeSync(repo, dir))));
  return worktree;
}

async function readBaseIndex(indexFile: string): Promise<Worktree['baseIndex']> {
  try {
    const [info, bytes] = await Promise.all([stat(indexFile), readFile(indexFile)]);
    return { bytes, mtimeMs: info.mtimeMs };
  } catch {
    // Then the fence hashes every file of the base instead: slower, just as right.
    return undefined;
  }
}

/** Removes the worktree and its directory, and forgets it in the host repository. */
export async function removeWorktree(worktree: Worktree): Promise<void> {
  await withWorktreeLock(worktree.repo, async () => {
    const removed = await git(worktree.repo, ['worktree', 'remove', '--force', '--force', worktree.dir], { allowFailure: true });
    await rm(worktree.dir, { recursive: true, force: true });
    // A remove that worked has forgotten the worktree already; prune only after one that did not.
    if (removed.exitCode !== 0) await git(worktree.repo, ['worktree', 'prune'], { allowFailure: true });
  });
  forget.get(worktree)?.();
}

/**
 * Hands a kept worktree (`--keep`) over to the person: unlocked, so neither a later run
 * nor `corral clean` takes it for a killed run's leftover, and plain `git worktree
 * remove` works on it.
 */
export async function releaseWorktree(worktree: Worktree): Promise<void> {
  await git(worktree.repo, ['worktree', 'unlock', worktree.dir], { allowFailure: true });
  forget.get(worktree)?.();
}

function unlockWorktreeSync(repo: string, dir: string): void {
  try {
    gitSync(repo, ['worktree', 'unlock', dir]);
  } catch {
    // Then `corral clean` would take it for a killed run's; nothing more to do on the way out.
  }
}

/** The same, synchronously, for a process that is about to exit. */
function removeWorktreeSync(repo: string, dir: string): void {
  try {
    gitSync(repo, ['worktree', 'remove', '--force', '--force', dir]);
  } catch {
    // Still removed below; `git worktree prune` forgets it on the next run.
  }
  rmSync(dir, { recursive: true, force: true });
  try {
    gitSync(repo, ['worktree', 'prune']);
  } catch {
    // Nothing more to do on the way out.
  }
}

/** A corral worktree git still knows of, and whether the run that made it is gone. */
export interface CorralWorktree {
  dir: string;
  /** The owning process, from the lock reason. */
  pid: number;
  stale: boolean;
}

/** Every worktree of `repo` that a corral run locked, with whether its run is still alive on this host. */
export async function listCorralWorktrees(repo: string): Promise<CorralWorktree[]> {
  return (await readWorktreeList(repo)).corral;
}

/** The corral worktrees of `repo`, and whether git lists any worktree as prunable (its folder gone). */
async function readWorktreeList(repo: string): Promise<{ corral: CorralWorktree[]; prunable: boolean }> {
  const records = await listWorktrees(repo);
  const found: CorralWorktree[] = [];
  for (const record of records) {
    const owner = record.locked === null ? null : /^corral pid=(\d+) host=(.*)$/.exec(record.locked);
    if (owner === null) continue;
    const pid = Number(owner[1]);
    // Another host's run (a shared network checkout) cannot be checked from here: never stale.
    found.push({ dir: record.dir, pid, stale: owner[2] === hostname() && !isAlive(pid) });
  }
  return { corral: found, prunable: records.some((record) => record.prunable !== null) };
}

/** The private temp dir of the run in the worktree `dir`: beside it, so whatever removes a killed run's worktree removes it too. */
export function runTempDirOf(dir: string): string {
  return `${dir}.tmp`;
}

/** Removes the worktrees (and their directories and temp dirs) that killed corral runs left, and prunes what git lost track of. */
export function removeStaleWorktrees(repo: string): Promise<string[]> {
  return withWorktreeLock(repo, () => removeStaleWorktreesLocked(repo));
}

async function removeStaleWorktreesLocked(repo: string): Promise<string[]> {
  const removed: string[] = [];
  const list = await readWorktreeList(repo);
  for (const worktree of list.corral) {
    if (!worktree.stale) continue;
    await git(repo, ['worktree', 'remove', '--force', '--force', worktree.dir], { allowFailure: true });
    await rm(worktree.dir, { recursive: true, force: true });
    await rm(runTempDirOf(worktree.dir), { recursive: true, force: true });
    removed.push(worktree.dir);
  }
  // Nothing to prune is the usual case, and git says so in the list (`prunable`, git 2.31+).
  if (removed.length > 0 || list.prunable) await git(repo, ['worktree', 'prune'], { allowFailure: true });
  return removed;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists and belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
