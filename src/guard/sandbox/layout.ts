import { readdirSync, realpathSync, statSync } from 'node:fs';
import { userInfo } from 'node:os';
import path from 'node:path';
import { gitMetadataOf } from '../paths/git-metadata.js';
import type { Bind, BwrapLayout } from './bwrap-argv.js';
import { CREDENTIAL_PLACES, credentialsInTrees, toolchainTrees, type VisibleTree } from './home-view.js';
import { within } from './paths.js';

export { within } from './paths.js';

/**
 * Credentials in a home directory that cannot be hidden whole (a home of `/`): reads are
 * not confined by the sandbox, so what a command must never read is taken out of its
 * view, by the same list that decides what a visible folder may hold. Every other home is
 * out of view entirely (home-view.ts).
 */
export const HIDDEN_IN_HOME = CREDENTIAL_PLACES;

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

/**
 * Secrets of the machine a user (root above all, as in CI containers) can read: password
 * hashes and the host's SSH keys. Every user's home goes too (OTHER_HOMES): the run's
 * commands have a private one of their own.
 */
export const MACHINE_SECRETS = ['/etc/shadow', '/etc/shadow-', '/etc/gshadow', '/etc/gshadow-', '/etc/security/opasswd'];
export const OTHER_HOMES = ['/home', '/root'];

/** The host's private SSH keys (`/etc/ssh/ssh_host_*_key`), as they are on this machine. */
function hostKeys(): string[] {
  try {
    return readdirSync('/etc/ssh')
      .filter((name) => /^ssh_host_.*_key$/.test(name))
      .map((name) => path.join('/etc/ssh', name));
  } catch {
    return [];
  }
}

/**
 * The machine's git config files, where a credential helper or token may be set for
 * every user: inside, the agent's git reads only the run's own config files.
 */
export const SYSTEM_GIT_CONFIG = ['/etc/gitconfig', '/usr/local/etc/gitconfig', '/opt/homebrew/etc/gitconfig'];

export interface LayoutOptions {
  bwrap: string;
  disableUserns: boolean;
  worktree: string;
  tmpDir: string;
  network: boolean;
  /** Home directories hidden whole (the commands' HOME first; the user's own is always added). */
  homes?: string[];
  /** Shown in place of the first home, read-only: the run's private home. Without it, that home is an empty folder. */
  privateHome?: string;
  /** The run's private gitdir, shown writable in place of the worktree's, and the object stores it reads. */
  privateGitdir?: { dir: string; objectStores: string[] };
  /** The folder in the temp dir that holds the private home and gitdir: out of view inside, so no command can replace them. */
  privateDir?: string;
  /** PATH as the commands get it: its folders under a hidden one stay visible, read-only. */
  searchPath?: string;
  /** More folders to show read-only (`sandbox.read`, absolute, checked by checkReadPaths). */
  readPaths?: string[];
  /** Files inside the worktree that stay read-only all the same: the scripts hooks run, trusted and unsandboxed. */
  protectedFiles?: string[];
  /** More folders bound writable at their own path (setup's package cache); each must exist. */
  writable?: string[];
  /** Unix sockets shown at their own path (the model proxy's): connectable, since a socket needs no write access to its mount. */
  sockets?: string[];
}

/** Reads the file system once per run: real paths, the worktree's git metadata, what exists to hide and to show. */
export function sandboxLayout(options: LayoutOptions): BwrapLayout {
  const worktree = realpathSync(options.worktree);
  const tmpDir = realpathSync(options.tmpDir);
  const git = gitMetadataOf(worktree).dirs;
  const [dotGit, gitdir, commonDir] = git;
  const linked = options.privateGitdir !== undefined && gitdir !== undefined && commonDir !== undefined;
  const readOnly = unique([...(linked ? [dotGit!] : git), ...(options.protectedFiles ?? [])].filter(exists));

  const covers: BwrapLayout['covers'] = [];
  const cover = (target: string, source?: string): void => {
    if (!covers.some((c) => c.target === target)) covers.push(source === undefined ? { target } : { target, source });
  };
  const [commandsHome, ...otherHomes] = (options.homes ?? []).filter((home) => path.isAbsolute(home));
  const homes = unique([...(commandsHome ? [commandsHome] : []), ...otherHomes, ...(passwdHome() ? [passwdHome()!] : [])]).flatMap((home) => realDirOrNothing(home));
  const uncoverable: string[] = [];
  for (const home of homes) {
    // `/` cannot be covered; its credentials are hidden by name instead.
    if (home === '/') uncoverable.push(home);
    else if (options.privateHome !== undefined && commandsHome !== undefined && realDirOrNothing(commandsHome)[0] === home) cover(home, options.privateHome);
    // Under /tmp a home is out of view already: the sandbox's /tmp is the run's own.
    else if (!within(home, '/tmp')) cover(home);
  }
  // Other people's homes (and root's, which CI containers run as): whatever lies in them
  // that a command needs (a toolchain on PATH, the worktree, `sandbox.read`) is shown again.
  for (const dir of OTHER_HOMES.flatMap((home) => realDirOrNothing(home))) {
    if (dir !== '/' && !within(dir, '/tmp') && !within(worktree, dir) && !within(tmpDir, dir)) cover(dir);
  }
  const writable: Bind[] = [];
  const objectViews: VisibleTree[] = [];
  if (linked) {
    // The host's `.git` and its checkout (where an untracked `.env` lives) go; only the
    // object stores come back, read-only, and the private gitdir in the worktree's place.
    const checkout = path.dirname(commonDir!);
    if (path.basename(commonDir!) === '.git' && checkout !== '/' && !within(checkout, '/tmp')) cover(checkout);
    // Even under /tmp, where it is out of view already: bubblewrap makes the folders that
    // lead to the object store and gitdir in the run's temp dir, and a `.git` there must
    // read as what it is, read-only, not take a planted config or hook.
    cover(commonDir!);
    objectViews.push(...options.privateGitdir!.objectStores.map((store) => ({ source: store, target: store })));
    writable.push({ source: options.privateGitdir!.dir, target: gitdir! });
  }
  for (const folder of options.writable ?? []) {
    const real = realpathSync(folder);
    writable.push({ source: real, target: real });
  }
  if (options.privateDir !== undefined) {
    const privateDir = realpathSync(options.privateDir);
    cover(privateDir);
    if (within(privateDir, tmpDir)) cover(path.join('/tmp', path.relative(tmpDir, privateDir)));
  }

  const hidden = covers.map((c) => c.target).filter((target) => !within(target, '/tmp'));
  const trees = dropNested([
    ...toolchainTrees(options.searchPath ?? '', hidden),
    ...(options.readPaths ?? []).flatMap((folder) => realDirOrNothing(folder).map((real) => ({ source: real, target: real }))),
  ]);
  const keep = [worktree, tmpDir, ...readOnly, ...writable.map((w) => w.target)];
  const inTrees = credentialsInTrees(trees, homes);
  const candidates = [
    ...uncoverable.flatMap((home) => HIDDEN_IN_HOME.map((name) => path.join(home, name))),
    ...(options.network ? [] : NO_NETWORK_HIDDEN),
    ...HIDDEN_SYSTEM,
    ...SYSTEM_GIT_CONFIG,
    ...MACHINE_SECRETS,
    ...hostKeys(),
  ].flatMap((p) => realOrNothing(p));
  const hiddenDirs: string[] = [];
  const hiddenFiles: string[] = [];
  // What lies in a visible tree is masked where the commands see it (a tree shown from a
  // link's target is seen at the link's place), so those paths are taken as they are.
  for (const candidate of unique([...candidates, ...inTrees.dirs, ...inTrees.files])) {
    // Under /tmp it is out of view already (the sandbox's /tmp is private), as is what
    // lies in a folder hidden before it; a path that holds or sits in a writable bind or
    // the git metadata is the run's own business (then the narrower entries still apply).
    if (within(candidate, '/tmp') || hiddenDirs.some((dir) => within(candidate, dir))) continue;
    if (keep.some((k) => within(candidate, k) || within(k, candidate))) continue;
    // Under a cover and in no visible tree: out of view already.
    if (hidden.some((h) => within(candidate, h)) && !trees.some((t) => within(candidate, t.target))) continue;
    (statSync(candidate).isDirectory() ? hiddenDirs : hiddenFiles).push(candidate);
  }
  return {
    bwrap: options.bwrap,
    worktree,
    tmpDir,
    covers,
    readViews: [...trees, ...objectViews, ...(options.sockets ?? []).map((socket) => ({ source: socket, target: socket }))],
    readOnly,
    writable,
    hiddenDirs,
    hiddenFiles,
    network: options.network,
    disableUserns: options.disableUserns,
  };
}

/** The user's home from the password database: hidden even when $HOME says otherwise. */
export function passwdHome(): string | undefined {
  try {
    const home = userInfo().homedir;
    return home && path.isAbsolute(home) ? home : undefined;
  } catch {
    return undefined;
  }
}

/** Trees without those another one already shows. */
function dropNested(trees: VisibleTree[]): VisibleTree[] {
  const plain = trees.filter((t) => t.source === t.target);
  return trees.filter(
    (tree, index) =>
      trees.findIndex((other) => other.target === tree.target) === index &&
      !(tree.source === tree.target && plain.some((other) => other.target !== tree.target && within(tree.target, other.target))),
  );
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

function realDirOrNothing(p: string): string[] {
  return realOrNothing(p).filter((real) => {
    try {
      return statSync(real).isDirectory();
    } catch {
      return false;
    }
  });
}

function unique(paths: string[]): string[] {
  return [...new Set(paths)];
}
