import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gitSync } from '../git/git.js';
import { pidAlive, scratchTempPrefix } from '../proc/owner.js';
import type { SecretValue } from '../text/redact.js';
import { writePatchSync } from './patch-file.js';

// A worktree is the only copy of an agent's work until its patch is on disk, so nothing
// corral does removes one before this has saved that patch: a second Ctrl-C on the way
// out, the next run and `corral clean` finding a killed run's worktree.

/** What a worktree's run recorded beside git's own entry for it (`<git dir>/worktrees/<name>/corral-run.json`). */
export interface RunMarker {
  /** The run's directory (trace, patch.diff). */
  runDir: string;
  /** The commit the run started from; the agent may have moved HEAD since. */
  baseCommit: string;
}

const MARKER_FILE = 'corral-run.json';

export function markerFileOf(adminDir: string): string {
  return path.join(adminDir, MARKER_FILE);
}

/** The marker of the worktree in `dir`, found through its `.git` file; null when there is none (an older corral's worktree). */
export function readRunMarker(dir: string): RunMarker | null {
  try {
    const pointer = /^gitdir: (.*)$/m.exec(readFileSync(path.join(dir, '.git'), 'utf8'))?.[1];
    if (pointer === undefined) return null;
    const marker = JSON.parse(readFileSync(markerFileOf(path.resolve(dir, pointer.trim())), 'utf8')) as Partial<RunMarker>;
    return typeof marker.runDir === 'string' && typeof marker.baseCommit === 'string' && /^[0-9a-f]{40,64}$/.test(marker.baseCommit) ? { runDir: marker.runDir, baseCommit: marker.baseCommit } : null;
  } catch {
    return null;
  }
}

/** Where the patch of the worktree in `dir` goes: its run's `patch.diff`, else `<repo>/.corral/salvaged/<worktree folder>.diff`. */
export function salvagePatchFile(repo: string, dir: string, marker: RunMarker | null): string {
  if (marker !== null && isDirectory(marker.runDir)) return path.join(marker.runDir, 'patch.diff');
  return path.join(repo, '.corral', 'salvaged', `${path.basename(dir)}.diff`);
}

export interface Salvage {
  /** The patch file; null when the worktree held no change (then no file is left). */
  patch: string | null;
}

/**
 * Saves every change in the worktree `dir` against `baseCommit` (edits, deletions, the
 * agent's commits, untracked files that its ignore rules do not hide) as a patch in
 * `patchFile`, written whole or not at all. A patch already there (the run wrote it before
 * it was killed) is kept as it is. Synchronous: it also runs in a process on its way out.
 */
export function salvageWorktreeSync(repo: string, dir: string, baseCommit: string, patchFile: string, secrets: SecretValue[]): Salvage {
  removeDeadWritersPartials(patchFile);
  if (isFile(patchFile)) return { patch: patchFile };
  const commonDir = gitSync(repo, ['rev-parse', '--path-format=absolute', '--git-common-dir']).trim();
  const scratch = mkdtempSync(path.join(tmpdir(), scratchTempPrefix('index')));
  try {
    const env = { GIT_INDEX_FILE: path.join(scratch, 'index'), GIT_DIR: commonDir };
    gitSync(dir, ['read-tree', baseCommit], { env });
    // Attributes from the base's tree (git 2.40 and later), as in the run's own snapshot.
    gitSync(dir, ['add', '--all', '--', '.'], { env: { ...env, GIT_WORK_TREE: dir, GIT_ATTR_SOURCE: baseCommit, GIT_LITERAL_PATHSPECS: '1' } });
    mkdirSync(path.dirname(patchFile), { recursive: true });
    writePatchSync({ cwd: dir, env, baseCommit }, patchFile, secrets);
    if (statSync(patchFile).size === 0) {
      unlinkSync(patchFile);
      return { patch: null };
    }
    return { patch: patchFile };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** The temp files (`<patch>.<pid>.partial`) a killed writer of `patchFile` left: never the patch, so only clutter. */
function removeDeadWritersPartials(patchFile: string): void {
  const name = path.basename(patchFile);
  let names: string[];
  try {
    names = readdirSync(path.dirname(patchFile));
  } catch {
    return;
  }
  for (const entry of names) {
    if (!entry.startsWith(`${name}.`)) continue;
    const pid = /^\.(\d+)\.partial(\.redacted)?$/.exec(entry.slice(name.length))?.[1];
    if (pid !== undefined && Number(pid) !== process.pid && !pidAlive(Number(pid))) rmSync(path.join(path.dirname(patchFile), entry), { force: true });
  }
}

function isDirectory(dir: string): boolean {
  try {
    return statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
