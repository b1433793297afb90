import { createHash, randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { cp, mkdir, readdir, readFile, realpath, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { gitCommonDir } from '../git/git.js';

// What setup leaves that the next run of the same repository can use again: package
// managers' downloads, and `node_modules` by lockfile. Kept per repository under the
// user's cache folder (`$XDG_CACHE_HOME/corral/repos/<name>-<hash>`, README "Caches"),
// never in the repository: its `.git` is the host's, and the worktree is thrown away.

/** The cache folder of one repository, and its two parts. */
export interface RepoCache {
  dir: string;
  /** Setup's package managers' downloads (npm, pnpm, yarn, pip), writable to setup only. */
  packages: string;
  /** `node_modules` folders setup made, one per lockfile digest. */
  nodeModules: string;
}

/** Where corral keeps caches: `$XDG_CACHE_HOME/corral`, else `~/.cache/corral`; null without either. */
export function cacheRoot(env: NodeJS.ProcessEnv): string | null {
  if (env.XDG_CACHE_HOME && path.isAbsolute(env.XDG_CACHE_HOME)) return path.join(env.XDG_CACHE_HOME, 'corral');
  if (env.HOME && path.isAbsolute(env.HOME)) return path.join(env.HOME, '.cache', 'corral');
  return null;
}

/**
 * The cache of the repository at `repo` (keyed by its git common dir, so every worktree
 * of one repository shares it), made if missing. Null when there is no cache folder.
 */
export async function openRepoCache(repo: string, env: NodeJS.ProcessEnv): Promise<RepoCache | null> {
  const root = cacheRoot(env);
  if (root === null) return null;
  const common = await realpath(await gitCommonDir(repo));
  const name = path.basename(path.basename(common) === '.git' ? path.dirname(common) : common).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40);
  const dir = path.join(root, 'repos', `${name}-${createHash('sha256').update(common).digest('hex').slice(0, 16)}`);
  const cache = { dir, packages: path.join(dir, 'packages'), nodeModules: path.join(dir, 'node_modules') };
  await mkdir(cache.packages, { recursive: true, mode: 0o700 });
  await mkdir(cache.nodeModules, { recursive: true, mode: 0o700 });
  return cache;
}

/** Removes the cache of the repository at `repo`; the folder it was, or null when there was none. */
export async function clearRepoCache(repo: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const cache = await openRepoCache(repo, env);
  if (cache === null) return null;
  await rm(cache.dir, { recursive: true, force: true });
  return cache.dir;
}

/** The lockfiles whose digest names a stored `node_modules`, the first found winning. */
export const LOCKFILES = ['package-lock.json', 'npm-shrinkwrap.json', 'pnpm-lock.yaml', 'yarn.lock', 'bun.lock', 'bun.lockb'];

/**
 * What a `node_modules` made by setup depends on: the lockfile and `package.json` at the
 * worktree's top, the setup commands, and the platform. Null without a lockfile.
 */
export async function nodeModulesKey(worktree: string, setupCommands: string[]): Promise<string | null> {
  for (const name of LOCKFILES) {
    const lock = await readFile(path.join(worktree, name)).catch(() => null);
    if (lock === null) continue;
    const manifest = await readFile(path.join(worktree, 'package.json')).catch(() => Buffer.alloc(0));
    const hash = createHash('sha256');
    for (const part of [name, lock, manifest, JSON.stringify(setupCommands), process.platform, process.arch]) hash.update(part).update('\0');
    return hash.digest('hex').slice(0, 32);
  }
  return null;
}

/**
 * Puts the stored `node_modules` of `key` into the worktree, if there is one and the
 * worktree has none (a tracked one is left alone). A copy, cloned where the file system
 * can (copy-on-write), never hard links: the agent may change files in `node_modules`,
 * and a link would change the stored copy for every later run.
 */
export async function restoreNodeModules(cache: RepoCache, key: string, worktree: string): Promise<boolean> {
  const stored = path.join(cache.nodeModules, key);
  const target = path.join(worktree, 'node_modules');
  if (!existsSync(stored) || existsSync(target)) return false;
  try {
    await copyTree(stored, target);
    return true;
  } catch (error) {
    await rm(target, { recursive: true, force: true });
    throw error;
  }
}

/**
 * Keeps the worktree's `node_modules` (as setup left it, before the agent's first
 * command) under `key`, unless one is kept already. Copied to a temp name and renamed, so
 * a run never finds half of one.
 */
export async function storeNodeModules(cache: RepoCache, key: string, worktree: string): Promise<boolean> {
  const source = path.join(worktree, 'node_modules');
  const stored = path.join(cache.nodeModules, key);
  if (!existsSync(source) || existsSync(stored)) return false;
  await removeDeadPartials(cache);
  const partial = path.join(cache.nodeModules, `${PARTIAL}${process.pid}-${randomBytes(4).toString('hex')}`);
  try {
    await copyTree(source, partial);
    await rename(partial, stored);
    return true;
  } catch (error) {
    // Another run stored the same one first: theirs is as good.
    if (existsSync(stored)) return false;
    throw error;
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

const PARTIAL = '.partial-';

/** Copies a killed run left half made: named after their process, removed once it is gone. */
async function removeDeadPartials(cache: RepoCache): Promise<void> {
  const names = await readdir(cache.nodeModules).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.startsWith(PARTIAL)) continue;
    const pid = Number.parseInt(name.slice(PARTIAL.length), 10);
    if (Number.isSafeInteger(pid) && pid > 0 && !isAlive(pid)) await rm(path.join(cache.nodeModules, name), { recursive: true, force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function copyTree(from: string, to: string): Promise<void> {
  // Links are copied as links, as written (`.bin` entries, pnpm's layout).
  return cp(from, to, { recursive: true, mode: constants.COPYFILE_FICLONE, verbatimSymlinks: true, preserveTimestamps: true, errorOnExist: true, force: false });
}
