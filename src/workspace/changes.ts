import type { Stats } from 'node:fs';
import { rmSync } from 'node:fs';
import { copyFile, mkdtemp, rm, stat, utimes } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git } from './git.js';
import type { Worktree } from './worktree.js';
import { trackLeftover } from './leftovers.js';

export type ChangeKind = 'added' | 'modified' | 'deleted' | 'renamed' | 'mode' | 'type';

/** One path that differs between the base commit and the worktree as it is now. */
export interface Change {
  kind: ChangeKind;
  path: string;
  /** The old path of a rename. */
  from?: string;
}

/**
 * A snapshot of the worktree (tracked, untracked and committed changes alike) staged into
 * a private index, so listing changes, the patch and the result commit all see the same
 * tree and the worktree's own index is never touched.
 */
export interface Snapshot {
  worktree: Worktree;
  env: { GIT_INDEX_FILE: string };
  dispose(): Promise<void>;
}

export async function snapshotWorktree(worktree: Worktree): Promise<Snapshot> {
  const tempDir = await mkdtemp(path.join(tmpdir(), 'corral-index-'));
  // Like the worktree: gone even when a second Ctrl-C ends the process mid-snapshot.
  const forget = trackLeftover(() => rmSync(tempDir, { recursive: true, force: true }));
  const dispose = () => rm(tempDir, { recursive: true, force: true }).finally(forget);
  try {
    const indexFile = path.join(tempDir, 'index');
    const realIndex = worktree.indexFile ?? (await git(worktree.dir, ['rev-parse', '--path-format=absolute', '--git-path', 'index'])).stdout.trim();
    // Starting from the worktree's index keeps git's stat cache, so large repos hash only
    // what changed. The copy keeps the index's mtime: git trusts an entry's stat (to the
    // second) only when the entry is older than the index file, so a copy stamped now would
    // hide a same-size edit made in the second of the checkout from the fence and the patch.
    await copyIndex(realIndex, indexFile);
    const env = { GIT_INDEX_FILE: indexFile };
    // Ignored files stay out, as in `git status`: build output and caches are not the agent's change.
    await git(worktree.dir, ['add', '--all'], { env });
    return { worktree, env, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

async function copyIndex(from: string, to: string): Promise<void> {
  let stamp: Stats;
  try {
    stamp = await stat(from);
    await copyFile(from, to);
  } catch {
    // No index to start from: git hashes every file, which is slower and just as right.
    await rm(to, { force: true });
    return;
  }
  // Rounded down, never later than the original: an older index only makes git check more.
  const mtime = new Date(Math.floor(stamp.mtimeMs));
  await utimes(to, mtime, mtime);
}

/** Every change of the snapshot against the base commit. */
export async function listChanges(snapshot: Snapshot): Promise<Change[]> {
  const { stdout } = await git(
    snapshot.worktree.dir,
    ['diff-index', '--cached', '--raw', '-z', '-M', '--no-ext-diff', snapshot.worktree.baseCommit],
    { env: snapshot.env },
  );
  return parseRawDiff(stdout);
}

/** Parses `git diff --raw -z` output. Exported for tests. */
export function parseRawDiff(raw: string): Change[] {
  const fields = raw.split('\0');
  const changes: Change[] = [];
  for (let i = 0; i < fields.length; ) {
    const header = fields[i++];
    if (!header) continue;
    const [oldMode, newMode, oldSha, newSha, status = ''] = header.slice(1).split(' ');
    const letter = status[0];
    if (letter === 'R' || letter === 'C') {
      const from = fields[i++] ?? '';
      const to = fields[i++] ?? '';
      changes.push(letter === 'R' ? { kind: 'renamed', path: to, from } : { kind: 'added', path: to });
      continue;
    }
    const file = fields[i++] ?? '';
    if (letter === 'A') changes.push({ kind: 'added', path: file });
    else if (letter === 'D') changes.push({ kind: 'deleted', path: file });
    else if (letter === 'T') changes.push({ kind: 'type', path: file });
    else if (oldSha === newSha && oldMode !== newMode) changes.push({ kind: 'mode', path: file });
    else changes.push({ kind: 'modified', path: file });
  }
  return changes;
}
