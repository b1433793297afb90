import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';

// What corral leaves on disk while it runs (temp dirs, locks, worktrees) names the process
// that owns it, so that a later corral (the next run, `corral clean`) removes only what a
// dead process left and never what a live run still uses.

/** When process `pid` started (clock ticks since boot, from /proc), or null where that cannot be read. */
export function processStartTime(pid: number = process.pid): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count from its end.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** The owner as recorded: pid, host, and start time where known (it tells a reused pid apart). */
export interface Owner {
  pid: number;
  host: string;
  start?: string | null;
}

export function thisProcess(): Owner {
  return { pid: process.pid, host: hostname(), start: processStartTime() };
}

/**
 * Whether the owner is alive here: 'alive', 'dead' (gone, or its pid now another process's),
 * or 'unknown' (another host's, which cannot be checked from here).
 */
export function ownerState(owner: Owner): 'alive' | 'dead' | 'unknown' {
  if (owner.host !== hostname()) return 'unknown';
  try {
    process.kill(owner.pid, 0);
  } catch (error) {
    // EPERM: it exists and belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return 'dead';
  }
  if (owner.start) {
    const now = processStartTime(owner.pid);
    // A pid that started at another time is another process: the owner is gone.
    if (now !== null && now !== owner.start) return 'dead';
  }
  return 'alive';
}

/** Whether a process of this host with this pid is alive (no start time to compare). */
export function pidAlive(pid: number): boolean {
  return ownerState({ pid, host: hostname() }) === 'alive';
}

/**
 * The prefix of a temp dir of `kind` owned by this process, for mkdtemp: `corral-<kind>+<pid>-`.
 * A ticket label holds only [A-Za-z0-9._-], so the `+` before the pid is unambiguous.
 */
export function ownedTempPrefix(kind: string): string {
  return `corral-${kind}+${process.pid}-`;
}

/** Scratch dirs corral's own code makes: the git launcher's files, snapshot indexes, sandbox probes. */
export type ScratchKind = 'git' | 'index' | 'probe';

/**
 * The prefix of a scratch dir of `kind` owned by this process: `corral-@<kind>+<pid>-`.
 * The `@`, which no ticket label holds, keeps it apart from the worktree folder of a
 * ticket named like the kind (`corral-index+<pid>-`): a dead owner's scratch dir is
 * removed, a dead run's worktree is salvaged first.
 */
export function scratchTempPrefix(kind: ScratchKind): string {
  return ownedTempPrefix(`@${kind}`);
}

const OWNED_TEMP = /^corral-(.+)\+(\d+)-[A-Za-z0-9]{6}(\.tmp)?$/;
/** Scratch kinds as corral named them before the `@`: removed only when not a worktree. */
const UNMARKED_SCRATCH = /^(git|index|probe)$/;

/** A temp entry corral made, as its name tells: its kind and owner pid. */
export interface OwnedTemp {
  path: string;
  kind: string;
  pid: number;
  /** A run's private temp dir, beside its worktree (`<worktree>.tmp`). */
  runTemp: boolean;
}

/** The entries of `dir` (default the temp dir) that corral made and whose owner is no longer alive. */
export function deadOwnersTemps(dir: string): OwnedTemp[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const found: OwnedTemp[] = [];
  for (const name of names) {
    const match = OWNED_TEMP.exec(name);
    if (match === null) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || pidAlive(pid)) continue;
    const full = path.join(dir, name);
    const runTemp = match[3] !== undefined;
    // A run's temp dir beside a worktree that is still there goes with that worktree (salvaged first).
    if (runTemp && existsSync(full.slice(0, -'.tmp'.length))) continue;
    // A worktree folder itself is never removed here: it is salvaged and removed through git.
    const kind = match[1]!;
    const scratch = kind.startsWith('@') || (UNMARKED_SCRATCH.test(kind) && !existsSync(path.join(full, '.git')));
    if (!runTemp && !scratch) continue;
    found.push({ path: full, kind: kind.replace(/^@/, ''), pid, runTemp });
  }
  return found;
}

