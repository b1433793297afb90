import type { Stats } from 'node:fs';
import { mkdtemp, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';

// Every place a run writes outside its worktree is tried before the first ticket starts:
// found at the end, a bad path costs the whole batch (its branches already committed) and
// ends in a stack trace instead of a sentence naming the option.

/**
 * Refuses a folder corral cannot make or write in: `dir` need not exist, but the nearest
 * folder above it that does must take a new entry. Nothing is created: the probe is removed.
 * `label` names where the path came from (`--runs-dir out`, `TMPDIR=/x`).
 */
export async function checkWritableFolder(dir: string, label: string, options: { mustExist?: boolean } = {}): Promise<void> {
  const existing = await nearestExisting(dir, label);
  if (options.mustExist && existing.path !== dir) throw new UsageError(`${label}: the folder ${dir} does not exist; create it, or unset ${label.split("=")[0]}`);
  if (!existing.stats.isDirectory()) throw new UsageError(`${label}: ${existing.path} is a file, not a folder`);
  await probeWrite(existing.path, label);
}

/** Refuses a JUnit target that is a folder, or whose folder is missing or takes no new file (the report is written beside it and renamed). */
export async function checkJunitFile(file: string, shown: string): Promise<void> {
  const label = `--junit ${shown}`;
  const target = await stat(file).catch(() => null);
  if (target?.isDirectory()) throw new UsageError(`${label}: ${shown} is a folder; name the report file, e.g. ${path.join(shown, 'junit.xml')}`);
  const folder = path.dirname(file);
  const folderStats = await stat(folder).catch(() => null);
  if (!folderStats?.isDirectory()) throw new UsageError(`${label}: the folder ${path.dirname(shown) || '.'} does not exist`);
  await probeWrite(folder, label);
}

/**
 * Refuses a `TMPDIR` that is not a writable folder. Not replaced by /tmp: a user who sets
 * TMPDIR chose where temp files go (a bigger disk, a private mount), as every other tool
 * honours it, and the worktree and index copies would otherwise land where they did not expect.
 */
export async function checkTmpdir(env: NodeJS.ProcessEnv): Promise<void> {
  const tmp = env.TMPDIR;
  if (tmp === undefined || tmp === '') return;
  await checkWritableFolder(path.resolve(tmp), `TMPDIR=${tmp}`, { mustExist: true });
}

/** Walked up by hand, not left to a recursive mkdir: under /proc that loops for ever. */
async function nearestExisting(dir: string, label: string): Promise<{ path: string; stats: Stats }> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    try {
      return { path: current, stats: await stat(current) };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A missing folder, or a file where a folder should be: look one level up.
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path.dirname(current) !== current) continue;
      throw new UsageError(`${label}: cannot look at ${current} (${code ?? String(error)})`);
    }
  }
}

async function probeWrite(folder: string, label: string): Promise<void> {
  let probe: string;
  try {
    probe = await mkdtemp(path.join(folder, '.corral-probe-'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`${label}: cannot write in ${folder} (${describeCode(code)})`);
  }
  await rmdir(probe).catch(() => undefined);
}

function describeCode(code: string | undefined): string {
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'read-only file system';
    case 'ENOSPC':
      return 'no space left on the device';
    case 'ENOENT':
      return 'this file system does not take new files';
    default:
      return code ?? 'unknown error';
  }
}
