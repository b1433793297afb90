import { unlinkSync } from 'node:fs';
import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { gitCommonDir } from '../git/git.js';
import { trackLeftover } from '../proc/leftovers.js';
import { pidAlive } from '../proc/owner.js';

// `git worktree add` writes a new worktree's entry under .git/worktrees in several steps,
// and a `git worktree prune` that runs between them deletes the half-made entry: the add
// then fails. Parallel runs (one process with --jobs, or several shards on one machine)
// add, remove and prune worktrees of one repository all the time, so corral does each of
// those holding one lock per repository: a promise chain within the process, and a lock
// file in the repository's git directory between processes.

const LOCK_FILE = 'corral-worktrees.lock';
const WAIT_MS = 15;
const GIVE_UP_MS = 10 * 60 * 1000;

const chains = new Map<string, Promise<unknown>>();

/**
 * Runs `work` while no other corral (in this process or another) adds, removes or prunes
 * worktrees of `repo`. `takeForeign` (`corral clean --force`): a lock another host's corral
 * holds is taken too.
 */
export async function withWorktreeLock<T>(repo: string, work: () => Promise<T>, options: { takeForeign?: boolean } = {}): Promise<T> {
  const lockFile = path.join(await gitCommonDir(repo), LOCK_FILE);
  const previous = chains.get(lockFile) ?? Promise.resolve();
  const mine = previous.catch(() => undefined).then(async () => {
    const held = await acquire(lockFile, options.takeForeign === true);
    // A second Ctrl-C exits without this finally: the lock goes with the process all the same.
    const forget = held ? trackLeftover(() => unlinkSync(lockFile)) : () => undefined;
    try {
      return await work();
    } finally {
      forget();
      if (held) await unlink(lockFile).catch(() => undefined);
    }
  });
  chains.set(lockFile, mine);
  try {
    return await mine;
  } finally {
    if (chains.get(lockFile) === mine) chains.delete(lockFile);
  }
}

/**
 * Takes the lock file; false when it cannot be made at all (a read-only git directory):
 * then only this process is kept in order, and a removal still goes ahead.
 */
async function acquire(lockFile: string, takeForeign: boolean): Promise<boolean> {
  const owner = `${process.pid} ${hostname()}\n`;
  const started = Date.now();
  for (;;) {
    try {
      const handle = await open(lockFile, 'wx');
      await handle.writeFile(owner);
      await handle.close();
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
    }
    // A lock left by a killed corral on this host would otherwise block every later run.
    const dead = await deadOwner(lockFile, takeForeign);
    // Judged again just before: another waiter may have cleared it and taken the lock since.
    if (dead !== null && (await readFile(lockFile, 'utf8').catch(() => null)) === dead) {
      await unlink(lockFile).catch(() => undefined);
      continue;
    }
    if (Date.now() - started > GIVE_UP_MS) {
      throw new Error(`${lockFile} has been held for ${GIVE_UP_MS / 60_000} minutes by another corral; if none is running, delete it`);
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_MS));
  }
}

/**
 * The lock's content when the corral that took it is gone (killed on this host, or killed
 * while writing it), or belongs to another host and `takeForeign` says to take it; else null.
 */
async function deadOwner(lockFile: string, takeForeign: boolean): Promise<string | null> {
  const text = await readFile(lockFile, 'utf8').catch(() => null);
  if (text === null) return null;
  const match = /^(\d+) (.*)\n$/.exec(text);
  if (!match) {
    // Empty or cut short: being written right now, or its writer died doing so.
    const age = await stat(lockFile).then((s) => Date.now() - s.mtimeMs, () => 0);
    return age > 5000 ? text : null;
  }
  if (match[2] !== hostname()) return takeForeign ? text : null;
  return pidAlive(Number(match[1])) ? null : text;
}
