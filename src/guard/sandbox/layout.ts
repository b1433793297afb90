import { realpathSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { gitMetadataOf } from '../paths/git-metadata.js';
import type { BwrapLayout } from './bwrap-argv.js';

/**
 * Credentials in a home directory, hidden from sandboxed commands: reads are not confined
 * by the sandbox, so what a command must never read is taken out of its view. The same
 * places the guard's secret patterns name (paths/protected.ts).
 */
export const HIDDEN_IN_HOME = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.npmrc',
  '.pypirc',
  '.git-credentials',
];

/**
 * A Unix socket stays connectable on a read-only mount and needs no network. Without
 * network, all of /run (where daemons keep their sockets) is hidden; with it, DNS may need
 * /run, so only these go: daemons that would run anything for the caller (a container
 * engine is root by another name), the system bus, and the per-user runtime dirs that hold
 * agent and session-bus sockets.
 */
export const NO_NETWORK_HIDDEN = ['/run'];
export const HIDDEN_SYSTEM = [
  '/run/user',
  '/run/docker.sock',
  '/var/run/docker.sock',
  '/run/podman',
  '/run/containerd',
  '/run/dbus',
  '/run/snapd.socket',
  '/run/snapd-snap.socket',
];

export interface LayoutOptions {
  bwrap: string;
  disableUserns: boolean;
  worktree: string;
  tmpDir: string;
  network: boolean;
  /** Home directories whose credentials are hidden (the commands' HOME; the user's own is always added). */
  homes?: string[];
  /** Files inside the worktree that stay read-only all the same: the scripts hooks run, trusted and unsandboxed. */
  protectedFiles?: string[];
}

/** Reads the file system once per run: real paths, the worktree's git metadata, what exists to hide. */
export function sandboxLayout(options: LayoutOptions): BwrapLayout {
  const worktree = realpathSync(options.worktree);
  const tmpDir = realpathSync(options.tmpDir);
  const readOnly = unique([...gitMetadataOf(worktree).dirs, ...(options.protectedFiles ?? [])].filter(exists));
  const keep = [worktree, tmpDir, ...readOnly];
  const homes = unique([...(options.homes ?? []), passwdHome()].filter((home): home is string => !!home && path.isAbsolute(home)));
  const candidates = [
    ...homes.flatMap((home) => HIDDEN_IN_HOME.map((name) => path.join(home, name))),
    ...(options.network ? [] : NO_NETWORK_HIDDEN),
    ...HIDDEN_SYSTEM,
  ];
  const hiddenDirs: string[] = [];
  const hiddenFiles: string[] = [];
  for (const candidate of unique(candidates.flatMap((p) => realOrNothing(p)))) {
    // Under /tmp it is out of view already (the sandbox's /tmp is private), as is what
    // lies in a folder hidden before it; a path that holds or sits in a writable bind or
    // the git metadata is the run's own business (then the narrower entries still apply).
    if (within(candidate, '/tmp') || hiddenDirs.some((dir) => within(candidate, dir))) continue;
    if (keep.some((k) => within(candidate, k) || within(k, candidate))) continue;
    (statSync(candidate).isDirectory() ? hiddenDirs : hiddenFiles).push(candidate);
  }
  return { bwrap: options.bwrap, worktree, tmpDir, readOnly, hiddenDirs, hiddenFiles, network: options.network, disableUserns: options.disableUserns };
}

/** `inner` is `outer` or lies below it. */
export function within(inner: string, outer: string): boolean {
  return inner === outer || inner.startsWith(outer.endsWith('/') ? outer : `${outer}/`);
}

function passwdHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined;
  }
}

function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch {
    return false;
  }
}

function realOrNothing(p: string): string[] {
  try {
    return [realpathSync(p)];
  } catch {
    return [];
  }
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}
