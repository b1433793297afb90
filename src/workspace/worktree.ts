import { rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm, stat } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { git, gitCommonDir, gitPaths, gitSync, rememberGitPaths } from '../git/git.js';
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
  /** The worktree's own index file, as its `.git` file named it when it was made. */
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
  const parent = await realpath(tmpdir());
  const dir = await mkdtemp(path.join(parent, `corral-${label.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}-`));
  try {
    await withWorktreeLock(repo, async () => {
      await removeStaleWorktreesLocked(repo).catch(() => undefined);
      await git(repo, ['worktree', 'add', '--detach', '--lock', '--reason', lockReason(), '--quiet', dir, baseCommit]);
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  // Where its index is, read now, before anything runs in it (no `rev-parse --git-path index` later).
  const gitdir = /^gitdir: (.+)$/m.exec(await readFile(path.join(dir, '.git'), 'utf8').catch(() => ''))?.[1];
  const indexFile = gitdir ? path.join(gitdir, 'index') : undefined;
  if (gitdir) {
    const host = await gitPaths(repo);
    // The worktree shares the host's config: its git calls need no `rev-parse` to find it.
    rememberGitPaths(dir, { ...host, head: path.join(gitdir, 'HEAD'), index: path.join(gitdir, 'index') });
  }
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
  const { stdout } = await git(repo, ['worktree', 'list', '--porcelain', '-z']);
  const found: CorralWorktree[] = [];
  let prunable = false;
  for (const record of stdout.split('\0\0')) {
    const fields = record.split('\0');
    if (fields.some((field) => field === 'prunable' || field.startsWith('prunable '))) prunable = true;
    const dir = fields.find((field) => field.startsWith('worktree '))?.slice('worktree '.length);
    const lock = fields.find((field) => field.startsWith('locked '))?.slice('locked '.length);
    const owner = lock === undefined ? null : /^corral pid=(\d+) host=(.*)$/.exec(lock);
    if (dir === undefined || owner === null) continue;
    const pid = Number(owner[1]);
    // Another host's run (a shared network checkout) cannot be checked from here: never stale.
    found.push({ dir, pid, stale: owner[2] === hostname() && !isAlive(pid) });
  }
  return { corral: found, prunable };
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
  const list = await scanWorktrees(repo);
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

/** One entry of `<common dir>/worktrees`, read as git reads it. */
interface WorktreeEntry {
  /** The worktree's folder, from the entry's gitdir file; null when that is missing or empty. */
  dir: string | null;
  /** The lock reason; null when not locked. */
  lock: string | null;
  /** Whether `git worktree list` would call it prunable (its folder or gitdir file gone). */
  prunable: boolean;
  /** The entry's folder, where its HEAD and index are. */
  adminDir: string;
}

/** The linked worktrees of `repo` read from the git directory: no `git worktree list` process before every add. */
export async function readWorktreeEntries(repo: string): Promise<WorktreeEntry[]> {
  const parent = path.join(await gitCommonDir(repo), 'worktrees');
  const ids = await readdir(parent).catch(() => [] as string[]);
  return Promise.all(
    ids.sort().map(async (id): Promise<WorktreeEntry> => {
      const adminDir = path.join(parent, id);
      const isDir = await stat(adminDir).then((s) => s.isDirectory(), () => false);
      const lock = isDir ? await readFile(path.join(adminDir, 'locked'), 'utf8').catch(() => null) : null;
      const gitdir = isDir ? ((await readFile(path.join(adminDir, 'gitdir'), 'utf8').catch(() => '')).trim() || null) : null;
      const dir = gitdir === null ? null : gitdir.replace(/\/\.git$/, '');
      // git's should_prune_worktree (as `worktree list` asks it): not a folder, or unlocked
      // with its gitdir file missing, empty or naming a path that no longer exists.
      const prunable = !isDir || (lock === null && (gitdir === null || !(await exists(gitdir))));
      return { dir, lock: lock === null ? null : lock.trim(), prunable, adminDir };
    }),
  );
}

/** What `readWorktreeList` says, from the git directory's files. */
async function scanWorktrees(repo: string): Promise<{ corral: CorralWorktree[]; prunable: boolean }> {
  const entries = await readWorktreeEntries(repo);
  const corral: CorralWorktree[] = [];
  for (const entry of entries) {
    const owner = entry.lock === null ? null : /^corral pid=(\d+) host=(.*)$/.exec(entry.lock);
    if (entry.dir === null || owner === null) continue;
    const pid = Number(owner[1]);
    corral.push({ dir: entry.dir, pid, stale: owner[2] === hostname() && !isAlive(pid) });
  }
  return { corral, prunable: entries.some((entry) => entry.prunable) };
}

function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
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
