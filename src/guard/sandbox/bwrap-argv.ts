// The bubblewrap command line of one sandboxed command, built from facts gathered once
// per run (layout.ts). Pure, so every mount and namespace is checked by a unit test.

import { depthOf } from './paths.js';

/** A folder shown at `target` from the real folder `source`. */
export interface Bind {
  source: string;
  target: string;
}

/** Where things are on this machine, as bubblewrap needs them; every path absolute and real. */
export interface BwrapLayout {
  /** Absolute path of the bwrap executable, found when it was probed. */
  bwrap: string;
  /** The only tree a command may write besides its temp dir (and its private gitdir). */
  worktree: string;
  /** The run's private temp dir: writable, at its own path ($TMPDIR) and at /tmp. */
  tmpDir: string;
  /**
   * Folders taken out of view whole before anything is shown below them: the real home
   * (the passwd one and $HOME), the host checkout and its `.git`, the run's private dir.
   * An empty tmpfs, or with `source`, that folder bound in its place (the private home);
   * read-only once everything below them is mounted.
   */
  covers: Array<{ target: string; source?: string }>;
  /** Shown read-only on top of a cover: toolchains on PATH, `sandbox.read` folders, the host's object stores. */
  readViews: Bind[];
  /**
   * Bound read-only on top of everything else, even where they sit inside a writable
   * bind: the worktree's `.git` entry (so it cannot be pointed elsewhere) and hook
   * scripts; without a private gitdir, also the gitdir and the common dir.
   */
  readOnly: string[];
  /** Bound writable: the run's private gitdir in place of the worktree's. */
  writable: Bind[];
  /** Directories replaced by an empty read-only tmpfs (credentials, sockets of daemons). */
  hiddenDirs: string[];
  /** Files and sockets replaced by /dev/null: they read as empty, take writes to nowhere, refuse connections. */
  hiddenFiles: string[];
  /** Keep the host's network (the ticket set `network: true`). */
  network: boolean;
  /** This bwrap knows `--disable-userns` (0.8 and later). */
  disableUserns: boolean;
}

/**
 * The argv that runs `argv` in `cwd` inside the sandbox. `asPid1`: `argv` is the PID
 * namespace's init itself (the run's supervisor, which reaps and ends what its commands
 * leave), not a child of bubblewrap's own.
 */
export function bwrapArgv(layout: BwrapLayout, argv: string[], cwd: string, options: { asPid1?: boolean } = {}): string[] {
  // Every mount after the mounts of the folders that hold it: shallower targets first (a
  // stable sort keeps the order below between equals). So the private /tmp is in place
  // before the worktree under it, the home is covered before the toolchains and the
  // worktree that lie in it are shown again, and the host `.git` is covered before its
  // object store and the private gitdir are put back in it.
  const placed: Array<{ depth: number; args: string[] }> = [
    ...layout.covers.map((c) => ({ depth: depthOf(c.target), args: c.source === undefined ? ['--tmpfs', c.target] : ['--bind', c.source, c.target] })),
    { depth: 1, args: ['--bind', layout.tmpDir, '/tmp'] },
    ...(layout.tmpDir === '/tmp' ? [] : [{ depth: depthOf(layout.tmpDir), args: ['--bind', layout.tmpDir, layout.tmpDir] }]),
    { depth: depthOf(layout.worktree), args: ['--bind', layout.worktree, layout.worktree] },
    ...layout.readViews.map((v) => ({ depth: depthOf(v.target), args: ['--ro-bind', v.source, v.target] })),
    ...layout.readOnly.map((p) => ({ depth: depthOf(p), args: ['--ro-bind', p, p] })),
    ...layout.writable.map((w) => ({ depth: depthOf(w.target), args: ['--bind', w.source, w.target] })),
  ];
  const mounts = placed.map((mount, index) => ({ ...mount, index })).sort((a, b) => a.depth - b.depth || a.index - b.index);
  return [
    layout.bwrap,
    // A user namespace even when corral runs as root: without one, root inside keeps
    // CAP_SYS_ADMIN and simply remounts / read-write. No capabilities at all inside, and
    // no nested user namespace to build new mounts from.
    '--unshare-user',
    ...(layout.disableUserns ? ['--disable-userns'] : []),
    '--cap-drop', 'ALL',
    // Its own PID namespace: nothing outside can be seen or signalled, and when the
    // command's first process ends the kernel kills everything it left behind.
    '--unshare-pid',
    ...(options.asPid1 ? ['--as-pid-1'] : []),
    '--unshare-ipc',
    ...(layout.network ? [] : ['--unshare-net']),
    // Killed when corral dies; a session of its own, so no terminal to inject input into.
    '--die-with-parent',
    '--new-session',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    ...mounts.flatMap((mount) => mount.args),
    ...layout.hiddenDirs.flatMap((p) => ['--tmpfs', p, '--remount-ro', p]),
    // A device needs --dev-bind (every other bind is nodev, and a nodev /dev/null cannot
    // even be read); it is /dev/null, so nothing is reachable through it.
    ...layout.hiddenFiles.flatMap((p) => ['--dev-bind', '/dev/null', p]),
    // Last: bubblewrap made the mount points below each cover while it was writable.
    // --remount-ro is not recursive, so what is bound below keeps its own mode. The
    // private home stays writable: it is the run's own, and tools keep caches there.
    ...layout.covers.filter((c) => c.source === undefined).flatMap((c) => ['--remount-ro', c.target]),
    '--chdir', cwd,
    '--',
    ...argv,
  ];
}
