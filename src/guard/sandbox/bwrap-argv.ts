// The bubblewrap command line of one sandboxed command, built from facts gathered once
// per run (layout.ts). Pure, so every mount and namespace is checked by a unit test.

/** Where things are on this machine, as bubblewrap needs them; every path absolute and real. */
export interface BwrapLayout {
  /** Absolute path of the bwrap executable, found when it was probed. */
  bwrap: string;
  /** The only tree a command may write besides its temp dir. */
  worktree: string;
  /** The run's private temp dir: writable, at its own path ($TMPDIR) and at /tmp. */
  tmpDir: string;
  /**
   * Bound read-only on top of everything else, even where they sit inside a writable
   * bind: the worktree's `.git` entry (so it cannot be pointed elsewhere), its gitdir and
   * the common dir of the host repository.
   */
  readOnly: string[];
  /** Directories replaced by an empty read-only tmpfs (credentials, sockets of daemons). */
  hiddenDirs: string[];
  /** Files and sockets replaced by /dev/null: they read as empty, take writes to nowhere, refuse connections. */
  hiddenFiles: string[];
  /** Keep the host's network (the ticket set `network: true`). */
  network: boolean;
  /** This bwrap knows `--disable-userns` (0.8 and later). */
  disableUserns: boolean;
}

/** The argv that runs `argv` in `cwd` inside the sandbox. */
export function bwrapArgv(layout: BwrapLayout, argv: string[], cwd: string): string[] {
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
    '--unshare-ipc',
    ...(layout.network ? [] : ['--unshare-net']),
    // Killed when corral dies; a session of its own, so no terminal to inject input into.
    '--die-with-parent',
    '--new-session',
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    // Mount order matters: /tmp first, then what lives under it (often the worktree).
    '--bind', layout.tmpDir, '/tmp',
    ...(layout.tmpDir === '/tmp' ? [] : ['--bind', layout.tmpDir, layout.tmpDir]),
    '--bind', layout.worktree, layout.worktree,
    ...layout.readOnly.flatMap((p) => ['--ro-bind', p, p]),
    ...layout.hiddenDirs.flatMap((p) => ['--tmpfs', p, '--remount-ro', p]),
    // A device needs --dev-bind (every other bind is nodev, and a nodev /dev/null cannot
    // even be read); it is /dev/null, so nothing is reachable through it.
    ...layout.hiddenFiles.flatMap((p) => ['--dev-bind', '/dev/null', p]),
    '--chdir', cwd,
    '--',
    ...argv,
  ];
}
