import { existsSync, rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { git, gitPaths, gitSync, linkedWorktreePaths, listWorktrees, loadUserLfsFilter } from '../git/git.js';
import { trackLeftover } from '../proc/leftovers.js';
import { deadOwnersTemps, ownedTempPrefix, ownerState, processStartTime, type Owner } from '../proc/owner.js';
import type { SecretValue } from '../text/redact.js';
import { markerFileOf, readRunMarker, salvagePatchFile, salvageWorktreeSync } from './salvage.js';
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
  /** Killed runs' leftovers found while this one was made: their worktrees' patches saved, then removed. */
  salvaged?: Cleaned[];
}

const forget = new WeakMap<Worktree, () => void>();

/**
 * The lock reason corral writes: it names the process that owns the worktree (with its
 * start time, which tells a reused pid apart), so a later run or `corral clean` can tell
 * a live run's worktree from one a killed run left.
 */
export function lockReason(pid = process.pid): string {
  const start = processStartTime(pid);
  return `corral pid=${pid} host=${hostname()}${start === null ? '' : ` start=${start}`}`;
}

/** The owner a lock reason names; null when corral did not write it. */
export function ownerOfLock(reason: string | null): Owner | null {
  const match = reason === null ? null : /^corral pid=(\d+) host=(\S*)(?: start=(\d+))?$/.exec(reason);
  return match === null ? null : { pid: Number(match[1]), host: match[2]!, start: match[3] ?? null };
}

export interface CreateWorktreeOptions {
  keep?: boolean;
  /** The run's directory: a killed run's patch is saved there by whoever finds its worktree. */
  runDir?: string;
  /** Redacted from a patch saved on the way out. */
  secrets?: SecretValue[];
}

/**
 * Makes a detached, locked worktree of `repo` at `baseCommit` in a fresh temp directory.
 * The lock keeps `git worktree prune` (ours or anyone's) off it while the run lives.
 * `salvaged`: what became of killed runs' worktrees found on the way (their patches).
 */
export async function createWorktree(repo: string, baseCommit: string, label: string, options: CreateWorktreeOptions = {}): Promise<Worktree> {
  // Killed runs' leftovers are looked for while the folder is made, outside the lock: one
  // `git worktree list` in the usual case of nothing to clean, and no lock held for it.
  // Temp dirs of dead corral processes go too, whatever repository they were for.
  // The user's lfs filter (read once per process) is asked for alongside, not by `worktree add`.
  const [dir, leftovers, sweptTemps] = await Promise.all([
    realpath(tmpdir()).then((parent) => mkdtemp(path.join(parent, ownedTempPrefix(label.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40))))),
    mayHoldLeftovers(repo),
    removeDeadOwnersTemps(),
    loadUserLfsFilter(),
  ]);
  let salvaged: Cleaned[] = sweptTemps;
  try {
    await withWorktreeLock(repo, async () => {
      // Judged again under the lock: another run may have cleaned them up since.
      if (leftovers) salvaged = [...salvaged, ...(await removeStaleWorktreesLocked(repo, { secrets: options.secrets ?? [] }).catch(() => []))];
      // git names the entry after the folder (another name only on a clash, then unseen and listed again).
      entriesMadeHere((await gitPaths(repo)).commonDir).add(path.basename(dir));
      await git(repo, ['worktree', 'add', '--detach', '--lock', '--reason', lockReason(), '--quiet', dir, baseCommit]);
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  // Where its index is, read from its `.git` file now (and remembered for its later git
  // calls), before anything runs in it.
  const paths = await linkedWorktreePaths(repo, dir).catch(() => null);
  if (paths !== null) entriesMadeHere(paths.commonDir).add(path.basename(paths.gitDir));
  const indexFile = paths?.index;
  // Whoever finds this worktree after a kill learns from it where the run's patch goes.
  if (paths !== null && options.runDir !== undefined) {
    await writeFile(markerFileOf(paths.gitDir), `${JSON.stringify({ runDir: options.runDir, baseCommit })}\n`).catch(() => undefined);
  }
  const baseIndex = indexFile === undefined ? undefined : await readBaseIndex(indexFile);
  const worktree: Worktree = { repo, dir, baseCommit, ...(indexFile ? { indexFile } : {}), ...(baseIndex ? { baseIndex } : {}), ...(salvaged.length > 0 ? { salvaged } : {}) };
  // On a second Ctrl-C: its work saved to the run's patch, then removed, unless the person
  // asked to keep it (then only unlocked, work intact).
  const patchFile = options.runDir === undefined ? undefined : path.join(options.runDir, 'patch.diff');
  forget.set(
    worktree,
    trackLeftover(() => (options.keep ? unlockWorktreeSync(repo, dir) : salvageAndRemoveSync(repo, dir, baseCommit, patchFile ?? salvagePatchFile(repo, dir, null), options.secrets ?? []))),
  );
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

function unlockWorktreeSync(repo: string, dir: string): string {
  try {
    gitSync(repo, ['worktree', 'unlock', dir]);
  } catch {
    // Then `corral clean` would take it for a killed run's, and salvage its patch first.
  }
  return `the worktree is kept: ${dir}`;
}

/**
 * For a process that is about to exit: the worktree's work saved as a patch, then the
 * worktree removed. When the patch cannot be written the worktree stays, locked, for the
 * next run or `corral clean` to salvage.
 */
function salvageAndRemoveSync(repo: string, dir: string, baseCommit: string, patchFile: string, secrets: SecretValue[]): string {
  let saved: string | null;
  try {
    saved = salvageWorktreeSync(repo, dir, baseCommit, patchFile, secrets).patch;
  } catch (error) {
    return `could not save the work of ${dir} as a patch (${error instanceof Error ? error.message.split('\n')[0] : String(error)}); the worktree is kept for \`corral clean\``;
  }
  removeWorktreeSync(repo, dir);
  return saved === null ? `nothing was changed; removed ${dir}` : `the work so far is in ${saved}`;
}

/** Removes the worktree synchronously; its work must be saved already. */
function removeWorktreeSync(repo: string, dir: string): void {
  try {
    gitSync(repo, ['worktree', 'remove', '--force', '--force', dir]);
  } catch {
    // Still removed below; `git worktree prune` forgets it on the next run.
  }
  rmSync(dir, { recursive: true, force: true });
  rmSync(runTempDirOf(dir), { recursive: true, force: true });
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
  host: string;
  /** Its run is gone (dead on this host, or its pid now another process's). */
  stale: boolean;
  /** Its owner cannot be checked from here (another host's, e.g. a CI container's): only `corral clean --force` takes it. */
  foreign: boolean;
  /** The commit git has checked out there. */
  head: string | null;
}

/** Every worktree of `repo` that a corral run locked, with whether its run is still alive on this host. */
export async function listCorralWorktrees(repo: string): Promise<CorralWorktree[]> {
  return (await readWorktreeList(repo)).corral;
}

/** The corral worktrees of `repo`, and whether git lists any worktree as prunable (its folder gone). */
async function readWorktreeList(repo: string): Promise<{ corral: CorralWorktree[]; prunable: boolean; liveOwners: Owner[] }> {
  const records = await listWorktrees(repo);
  const found: CorralWorktree[] = [];
  const liveOwners: Owner[] = [];
  for (const record of records) {
    const owner = ownerOfLock(record.locked);
    if (owner === null) continue;
    const state = ownerState(owner);
    if (state === 'alive' && owner.pid !== process.pid) liveOwners.push(owner);
    found.push({ dir: record.dir, pid: owner.pid, host: owner.host, stale: state === 'dead', foreign: state === 'unknown', head: record.head });
  }
  return { corral: found, prunable: records.some((record) => record.prunable !== null), liveOwners };
}

/**
 * Whether git would keep the worktree entry `entry` on a prune: it is locked, or the
 * `.git` file its `gitdir` names is still there (git's own test for "prunable").
 */
async function entryKept(entry: string): Promise<boolean> {
  if (await stat(path.join(entry, 'locked')).then(() => true, () => false)) return true;
  const gitFile = (await readFile(path.join(entry, 'gitdir'), 'utf8').catch(() => '')).trim();
  // Newer git may write it relative to the entry (worktree.useRelativePaths).
  return gitFile !== '' && (await stat(path.resolve(entry, gitFile)).then(() => true, () => false));
}

/**
 * What the last listing of a repository's worktrees that found nothing to clean saw, by
 * common git directory: the names of the worktrees' entries (`worktrees/<name>`, this
 * process's own added as it makes them), and the other live corral processes owning any.
 */
const seenWorktreeEntries = new Map<string, { entries: Set<string>; liveOwners: Owner[] }>();
/** The entries this process made, by common git directory: its own, never a killed run's while it lives. */
const madeHere = new Map<string, Set<string>>();

function entriesMadeHere(commonDir: string): Set<string> {
  let made = madeHere.get(commonDir);
  if (made === undefined) madeHere.set(commonDir, (made = new Set()));
  return made;
}

/**
 * Whether `repo` may hold a killed run's worktree (or one git would prune). Every ticket
 * of a batch asks as it makes its worktree; `git worktree list` runs only when the
 * answer may have changed since the last listing that found nothing: an entry in the
 * common git directory's `worktrees/` that it did not see (and this process did not
 * make), an entry git would now prune (its folder gone, not locked), or a corral process
 * that owned one and has died since. Otherwise a few file reads and a signal 0 answer, and a batch starts one `git worktree list` per repository,
 * not one per ticket. True when it cannot tell.
 */
async function mayHoldLeftovers(repo: string): Promise<boolean> {
  try {
    const { commonDir } = await gitPaths(repo);
    const entriesDir = path.join(commonDir, 'worktrees');
    const seen = seenWorktreeEntries.get(commonDir);
    const names = await readdir(entriesDir).catch(() => [] as string[]);
    const made = entriesMadeHere(commonDir);
    const unchanged = seen !== undefined && names.every((name) => seen.entries.has(name) || made.has(name)) && seen.liveOwners.every((owner) => ownerState(owner) !== 'dead');
    // This process's own entries are its live runs' (or being made or removed right now): never leftovers.
    const others = names.filter((name) => !made.has(name));
    if (unchanged && (await Promise.all(others.map((name) => entryKept(path.join(entriesDir, name))))).every(Boolean)) return false;
    const list = await readWorktreeList(repo);
    const leftovers = list.prunable || list.corral.some((worktree) => worktree.stale);
    // Read before the listing: an entry made in between is unseen, and asked about next time.
    if (leftovers) seenWorktreeEntries.delete(commonDir);
    else seenWorktreeEntries.set(commonDir, { entries: new Set(names), liveOwners: list.liveOwners });
    return leftovers;
  } catch {
    return true;
  }
}

/** The private temp dir of the run in the worktree `dir`: beside it, so whatever removes a killed run's worktree removes it too. */
export function runTempDirOf(dir: string): string {
  return `${dir}.tmp`;
}

/** What became of one leftover: a worktree (its patch saved, or kept when that failed), or a temp dir or lock removed. */
export interface Cleaned {
  /** The worktree, temp dir or lock file. */
  path: string;
  kind: 'worktree' | 'temp' | 'lock';
  /** Worktrees: where its work was saved; null when it held no change. */
  patch?: string | null;
  /** Set when it was not removed, and why. */
  kept?: string;
}

export interface CleanOptions {
  /** Also take worktrees locked by another host's corral (CI containers, a shared checkout), and other hosts' locks. */
  force?: boolean;
  /** Redacted from the patches saved. */
  secrets?: SecretValue[];
  /** Only list what would be taken, remove nothing. */
  dryRun?: boolean;
}

/**
 * Saves the patch of each worktree a killed corral run left, then removes it (its folder
 * and temp dir), prunes what git lost track of, and removes the temp dirs of dead corral
 * processes. A worktree whose patch cannot be written stays.
 */
export function removeStaleWorktrees(repo: string, options: CleanOptions = {}): Promise<Cleaned[]> {
  if (options.dryRun) return staleLeftovers(repo, options);
  return withWorktreeLock(repo, () => removeStaleWorktreesLocked(repo, options), { takeForeign: options.force === true });
}

/** What `removeStaleWorktrees` would take, without taking it. */
async function staleLeftovers(repo: string, options: CleanOptions): Promise<Cleaned[]> {
  const list = await readWorktreeList(repo);
  return [
    ...list.corral.filter((worktree) => worktree.stale || (options.force && worktree.foreign)).map((worktree): Cleaned => ({ path: worktree.dir, kind: 'worktree' })),
    ...deadOwnersTemps(tmpdir()).map((temp): Cleaned => ({ path: temp.path, kind: 'temp' })),
  ];
}

async function removeStaleWorktreesLocked(repo: string, options: CleanOptions): Promise<Cleaned[]> {
  const cleaned: Cleaned[] = [];
  const list = await readWorktreeList(repo);
  let removed = 0;
  for (const worktree of list.corral) {
    if (!(worktree.stale || (options.force && worktree.foreign))) continue;
    const marker = readRunMarker(worktree.dir);
    const patchFile = salvagePatchFile(repo, worktree.dir, marker);
    // Without a marker (an older corral's worktree), the commit checked out is the best base known.
    const base = marker?.baseCommit ?? worktree.head;
    let patch: string | null = null;
    if (existsSync(worktree.dir)) {
      try {
        if (base === null) throw new Error('its base commit is unknown');
        patch = salvageWorktreeSync(repo, worktree.dir, base, patchFile, options.secrets ?? []).patch;
      } catch (error) {
        cleaned.push({ path: worktree.dir, kind: 'worktree', kept: `its work could not be saved as a patch: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` });
        continue;
      }
    }
    await git(repo, ['worktree', 'remove', '--force', '--force', worktree.dir], { allowFailure: true });
    await rm(worktree.dir, { recursive: true, force: true });
    await rm(runTempDirOf(worktree.dir), { recursive: true, force: true });
    cleaned.push({ path: worktree.dir, kind: 'worktree', patch });
    removed += 1;
  }
  // Nothing to prune is the usual case, and git says so in the list (`prunable`, git 2.31+).
  if (removed > 0 || list.prunable) await git(repo, ['worktree', 'prune'], { allowFailure: true });
  return [...cleaned, ...(await removeDeadOwnersTemps())];
}

/** Removes the temp dirs of dead corral processes (snapshot indexes, sandbox probes, run temp dirs whose worktree is gone). */
async function removeDeadOwnersTemps(): Promise<Cleaned[]> {
  const cleaned: Cleaned[] = [];
  for (const temp of deadOwnersTemps(tmpdir())) {
    await rm(temp.path, { recursive: true, force: true }).catch(() => undefined);
    cleaned.push({ path: temp.path, kind: 'temp' });
  }
  return cleaned;
}
