import { realpath, stat, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { isInstructionFileName, type TreeEntry } from '../agent/instructions.js';
import { UsageError } from '../errors.js';
import { git } from '../git/git.js';

// Found before the first ticket runs: a disk too small for a worktree, or for a run's
// records, would otherwise end a run half way (a checkout cut short, a trace that cannot
// be written) after its setup and model turns were paid for.

/** Free space a run directory needs at least: its trace, its patch and approvals, for a usual run. */
export const MIN_RUNS_DIR_FREE = 1024 * 1024;

/** What a checkout's index costs per file (its entry and path), on top of the files. */
const INDEX_BYTES_PER_FILE = 100;

export interface DiskSpaceOptions {
  /** Where run directories go (`--runs-dir`), or each ticket's `<repo>/.corral/runs`. */
  runsDir?: string;
  /** How many tickets run at once: as many worktrees exist side by side. */
  jobs: number;
  /** How `--runs-dir` was written, to name it in a message. */
  runsDirShown?: string;
}

interface Need {
  /** A folder on the file system, to read its free space and to name it. */
  dir: string;
  bytes: number;
  /** Why, and what to do: completes "<dir> has N free, and ...". */
  why: string;
}

/**
 * Refuses (exit 64, naming the folder, the space free and the space needed) a batch whose
 * worktrees would not fit where worktrees are made (TMPDIR), or whose run records would not
 * fit in the runs folder. Needs on one file system are added up. A size that cannot be
 * read (a file system without statfs) is no reason to refuse.
 */
export async function checkDiskSpace(tickets: readonly { repo: string; base: string; baseCommit?: string }[], options: DiskSpaceOptions): Promise<void> {
  if (tickets.length === 0) return;
  const needs: Need[] = [];
  // The listings start before this returns its promise (the caller loads code meanwhile).
  const sizes = new Map<string, Promise<number | null>>();
  const sizing = Promise.all(
    tickets.map(async (ticket) => {
      const rev = ticket.baseCommit ?? ticket.base;
      const key = `${ticket.repo}\0${rev}`;
      if (!sizes.has(key)) sizes.set(key, checkoutBytes(ticket.repo, rev));
      return { ticket, bytes: await sizes.get(key)! };
    }),
  );
  const worktreeParent = await realpath(tmpdir()).catch(() => tmpdir());
  const sized = await sizing;
  // The largest checkouts that can exist at once.
  const atOnce = sized
    .flatMap(({ ticket, bytes }) => (bytes === null ? [] : [{ ticket, bytes }]))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, Math.max(1, options.jobs));
  if (atOnce.length > 0) {
    const bytes = atOnce.reduce((sum, s) => sum + s.bytes, 0);
    const repos = [...new Set(atOnce.map((s) => s.ticket.repo))];
    const what = atOnce.length === 1 ? `a worktree of ${repos[0]} needs ${formatBytes(bytes)}` : `${atOnce.length} worktrees at once (of ${repos.join(', ')}) need ${formatBytes(bytes)}`;
    needs.push({ dir: worktreeParent, bytes, why: `${what}; free some space, or set TMPDIR to a folder on a bigger disk (worktrees are made there)` });
  }
  const runsDirs = options.runsDir !== undefined ? [options.runsDir] : [...new Set(tickets.map((t) => path.join(t.repo, '.corral', 'runs')))];
  for (const dir of runsDirs) {
    const label = options.runsDir !== undefined ? `--runs-dir ${options.runsDirShown ?? options.runsDir} needs` : `the run records (${dir}) need`;
    const fix = options.runsDir !== undefined ? 'free some space, or choose another --runs-dir' : 'free some space, or put them on another disk with --runs-dir';
    needs.push({ dir, bytes: MIN_RUNS_DIR_FREE, why: `${label} at least ${formatBytes(MIN_RUNS_DIR_FREE)} for a run's trace and patch; ${fix}` });
  }
  await refuseShortfalls(needs);
}

/** Adds up the needs of each file system and throws for the first one that does not have the room. */
async function refuseShortfalls(needs: Need[]): Promise<void> {
  const byDevice = new Map<string, { free: number; dir: string; total: number; whys: string[] }>();
  for (const need of needs) {
    const existing = await nearestExisting(need.dir);
    if (existing === null) continue;
    const [info, fs] = await Promise.all([stat(existing), statfs(existing).catch(() => null)]);
    if (fs === null) continue;
    const device = String(info.dev);
    const entry = byDevice.get(device) ?? { free: fs.bavail * fs.bsize, dir: existing, total: 0, whys: [] };
    entry.total += need.bytes;
    entry.whys.push(need.why);
    byDevice.set(device, entry);
  }
  for (const { free, dir, total, whys } of byDevice.values()) {
    if (free >= total) continue;
    const together = whys.length > 1 ? ` (${formatBytes(total)} together)` : '';
    throw new UsageError(`not enough free space: ${dir} has ${formatBytes(free)} free, and ${whys.join('; and ')}${together}`);
  }
}

/**
 * The instruction files' entries (agent/instructions.ts) that this preflight's listing of a
 * commit's whole tree saw, by repository and commit id: the run reads its AGENTS.md and
 * CLAUDE.md from them instead of listing the tree again on the way to its first request.
 * Only a full commit id is kept (a branch name could move); entries of a commit never change.
 */
const instructionEntries = new Map<string, ReadonlyMap<string, TreeEntry>>();

/** What the preflight's listing of `commit` in `repo` found of instruction files, if it listed that commit. */
export function listedInstructionEntries(repo: string, commit: string): ReadonlyMap<string, TreeEntry> | undefined {
  return instructionEntries.get(`${repo}\0${commit}`);
}

/** The bytes a checkout of `rev` writes: its files and its index; null when git cannot say. */
async function checkoutBytes(repo: string, rev: string): Promise<number | null> {
  const listed = await git(repo, ['ls-tree', '-r', '-l', '-z', '--full-tree', rev], { allowFailure: true }).catch(() => null);
  if (listed === null || listed.exitCode !== 0) return null;
  let bytes = 0;
  const instructions = new Map<string, TreeEntry>();
  for (const entry of listed.stdout.split('\0')) {
    if (entry === '') continue;
    // `<mode> <type> <object> <size>\t<path>`; a submodule's size is `-`.
    const fields = /^(\S+) (\S+) (\S+) +(\S+)\t/.exec(entry);
    const size = Number(/^\d+$/.test(fields?.[4] ?? '') ? fields![4] : 0);
    // Files take whole blocks: a small file costs a block, as the file system counts it.
    bytes += Math.ceil(size / 4096) * 4096 + INDEX_BYTES_PER_FILE;
    const file = fields ? entry.slice(fields[0].length) : '';
    if (fields && isInstructionFileName(file)) instructions.set(file, { mode: fields[1]!, type: fields[2]!, oid: fields[3]! });
  }
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(rev)) instructionEntries.set(`${repo}\0${rev}`, instructions);
  return bytes;
}

async function nearestExisting(dir: string): Promise<string | null> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const info = await stat(current).catch(() => null);
    if (info?.isDirectory()) return current;
    if (path.dirname(current) === current) return null;
  }
}

/** 512 B, 3.4 KiB, 12.0 MiB, 1.5 GiB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${units[unit]}`;
}
