import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git } from './git.js';

/** A throwaway checkout of the host repository at a recorded base commit. */
export interface Worktree {
  /** Top directory of the host repository. */
  repo: string;
  /** Absolute real path of the worktree, outside the host checkout. */
  dir: string;
  /** The commit the worktree started from; the fence and the patch compare against it. */
  baseCommit: string;
}

/** Makes a detached worktree of `repo` at `baseCommit` in a fresh temp directory. */
export async function createWorktree(repo: string, baseCommit: string, label: string): Promise<Worktree> {
  const parent = await realpath(tmpdir());
  const dir = await mkdtemp(path.join(parent, `corral-${label.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 40)}-`));
  try {
    await git(repo, ['worktree', 'add', '--detach', '--quiet', dir, baseCommit]);
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
  return { repo, dir, baseCommit };
}

/** Removes the worktree and its directory, and forgets it in the host repository. */
export async function removeWorktree(worktree: Worktree): Promise<void> {
  await git(worktree.repo, ['worktree', 'remove', '--force', '--force', worktree.dir], { allowFailure: true });
  await rm(worktree.dir, { recursive: true, force: true });
  await git(worktree.repo, ['worktree', 'prune'], { allowFailure: true });
}
