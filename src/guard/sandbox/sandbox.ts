import { mkdtempSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { findExecutable } from '../../proc/find-executable.js';
import { findSubreaper } from '../../proc/subreaper.js';
import type { CommandSandbox } from '../../proc/run-command.js';
import { Supervisor, supervisorArgv } from '../../proc/supervisor.js';
import { gitMetadataOf } from '../paths/git-metadata.js';
import { bwrapArgv, type BwrapLayout } from './bwrap-argv.js';
import { checkReadPaths } from './home-view.js';
import { passwdHome, sandboxLayout, within } from './layout.js';
import { makePrivateGitdir } from './private-git.js';
import { makePrivateHome } from './private-home.js';
import { probeBubblewrap } from './probe.js';
import { checkExposed, findWorktreeSecrets, type WorktreeSecrets } from './worktree-secrets.js';

// The operating system as the boundary behind the guard: every Bash call, check and
// setup command of a run goes through one Sandbox, built once when the worktree exists.
// Hooks (trusted) and corral's own Read/Write/Edit (in-process, guarded) do not.

export interface Sandbox extends CommandSandbox {
  kind: 'bwrap' | 'none';
  /** Whether the agent's commands and the checks can reach the network (always, without a sandbox). */
  network: boolean;
  /**
   * Where setup commands run: the same sandbox, except that it has the network unless the
   * ticket turned it off, and setup's package cache is writable in it.
   */
  setup: CommandSandbox & { network: boolean };
  /** One line for the summary and the trace when `auto` found no working bubblewrap. */
  warning?: string;
  /**
   * The agent phase starts: from now on every command sees the worktree's secret files
   * (those there now) as empty, except the ones `expose` names. Call it once setup is
   * done, before the agent's first command. Without bubblewrap it masks nothing.
   */
  maskSecrets(): WorktreeSecrets;
  /** Worktree-relative paths masked since `maskSecrets` (empty before, and without bubblewrap). */
  readonly masked: readonly string[];
  /** Worktree-relative secret files left visible because `expose` names them. */
  readonly exposed: readonly string[];
  /** Whether commands run under one supervisor (in a bubblewrap started once per view, or without a sandbox as a child subreaper), rather than each on its own. */
  supervised: boolean;
  /** Ends the sandboxes started for the run's commands. Never throws. */
  close(): Promise<void>;
}

const NOTHING_MASKED: WorktreeSecrets = Object.freeze({ masked: [], exposed: [] }) as WorktreeSecrets;

/** Commands run as they are. */
const UNCONFINED: CommandSandbox & { network: boolean } = { network: true, wrap: (argv) => argv };
export const NO_SANDBOX: Sandbox = {
  kind: 'none',
  network: true,
  setup: UNCONFINED,
  wrap: (argv) => argv,
  maskSecrets: () => NOTHING_MASKED,
  masked: [],
  exposed: [],
  supervised: false,
  close: () => Promise.resolve(),
};

export interface SandboxOptions {
  mode: SandboxMode;
  /** The run's worktree: the one tree commands may write. */
  worktree: string;
  /** The run's private temp dir ($TMPDIR): writable, the sandbox's /tmp, and where the private home and gitdir are made. */
  tmpDir: string;
  /** The ticket's `network: true`: the agent's commands and the checks get the network. */
  network: boolean;
  /** Setup commands get the network (unless the ticket's `network: {setup: false}`). */
  setupNetwork?: boolean;
  /** Folders setup commands may write besides the worktree and temp dir (the package cache); each must exist. */
  setupWritable?: string[];
  /** The HOME commands see: the real one is hidden and a private, empty one shown there (the user's own is hidden too). */
  home?: string;
  /** Where to look for bwrap, as in PATH; default corral's own PATH. Its folders under the home stay visible. */
  searchPath?: string;
  /** Files in the worktree no command may change (hook scripts). */
  protectedFiles?: string[];
  /** More folders shown read-only (`sandbox.read`): absolute or under `~`; a credential folder is a usage error. */
  readPaths?: string[];
  /** Worktree-relative secret files the agent's commands may read all the same (`sandbox.expose`). */
  expose?: string[];
  /** Unix sockets commands may connect to, shown at their own path (the model proxy's); each must exist. */
  sockets?: string[];
  /** A bubblewrap for each command (`sandbox.per_command`), instead of one per run with a supervisor inside. */
  perCommand?: boolean;
}

/**
 * What the model is told about its sandbox (a bubblewrap sandbox and whether it has the
 * network, or nothing), known before the sandbox exists: the probe behind it is the one
 * `createSandbox` then uses, so the two always agree.
 */
/** What a ticket or config chose: bubblewrap, nothing, or bubblewrap wherever it works. */
export type SandboxMode = 'bwrap' | 'none' | 'auto';

export async function sandboxConfinement(mode: SandboxMode, network: boolean, searchPath?: string): Promise<{ network: boolean } | undefined> {
  if (mode === 'none') return undefined;
  const probe = await probeBubblewrap(searchPath === undefined ? {} : { searchPath });
  return probe.ok ? { network } : undefined;
}

/**
 * The sandbox of one run. `none` runs commands as they are; `auto` uses bubblewrap when
 * it works here, else none with a warning; `bwrap` without a working bubblewrap is a
 * usage error (preflight reports it before anything runs; this is the backstop).
 */
export async function createSandbox(options: SandboxOptions): Promise<Sandbox> {
  if (options.mode === 'none') return unconfined();
  const probe = await probeBubblewrap(options.searchPath === undefined ? {} : { searchPath: options.searchPath });
  if (!probe.ok) {
    if (options.mode === 'bwrap') throw new UsageError(`sandbox: bwrap: bubblewrap does not work on this machine: ${probe.reason}`);
    return unconfined(`sandbox: none (bubblewrap does not work here: ${probe.reason}); commands run unconfined`);
  }
  const searchPath = options.searchPath ?? process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  const userHome = options.home ?? passwdHome();
  // Checked before anything is made: a refused folder or name stops the run.
  const readPaths = checkReadPaths(options.readPaths ?? [], userHome);
  const expose = checkExposed(options.expose ?? []);
  // Inside the temp dir, so it goes with it (the run's end, `corral clean`); out of view
  // inside the sandbox, so no command can replace what is bound from it.
  const privateDir = mkdtempSync(path.join(options.tmpDir, '.corral-sandbox-'));
  const privateHome = path.join(privateDir, 'home');
  await makePrivateHome(privateHome, userHome, searchPath);
  const [, gitdir, commonDir] = gitMetadataOf(options.worktree).dirs;
  const privateGitdir =
    gitdir !== undefined && commonDir !== undefined ? { dir: path.join(privateDir, 'git'), ...(await makePrivateGitdir(path.join(privateDir, 'git'), { gitdir, commonDir })) } : undefined;
  const layoutOptions = {
    bwrap: probe.bwrap,
    disableUserns: probe.disableUserns,
    worktree: options.worktree,
    tmpDir: options.tmpDir,
    network: options.network,
    ...(userHome ? { homes: [userHome] } : {}),
    privateHome,
    privateDir,
    ...(privateGitdir ? { privateGitdir } : {}),
    searchPath,
    readPaths,
    ...(options.protectedFiles ? { protectedFiles: options.protectedFiles } : {}),
    ...(options.sockets ? { sockets: options.sockets } : {}),
  };
  const layout = sandboxLayout(layoutOptions);
  // Setup is the ticket author's, not the agent's: the network by default, and a package
  // cache that outlives the run. Nothing else differs; secrets are not masked yet then.
  const setupNetwork = options.setupNetwork ?? true;
  const setupLayout = sandboxLayout({ ...layoutOptions, network: setupNetwork, writable: options.setupWritable ?? [] });
  let secrets: WorktreeSecrets = NOTHING_MASKED;
  const agentLayout = (): BwrapLayout => {
    // Only those still there: over a deleted one, bubblewrap would make an empty file in the worktree.
    const masks = secrets.masked.map((rel) => path.join(layout.worktree, rel)).filter(present);
    return masks.length === 0 ? layout : { ...layout, hiddenFiles: [...layout.hiddenFiles, ...masks] };
  };
  // The supervisor is perl, the first on the commands' PATH that the sandbox shows.
  const perl = options.perCommand || !probe.asPid1 ? undefined : visiblePerl(searchPath, layout);
  const setupView = perl === undefined ? undefined : new SupervisorSlot('setup');
  const agentView = perl === undefined ? undefined : new SupervisorSlot('commands');
  // bubblewrap with the supervisor as its namespace's init, for the view `of`.
  const supervised = (of: BwrapLayout): string[] => bwrapArgv(of, supervisorArgv(perl!), of.worktree, { asPid1: true });
  return {
    kind: 'bwrap',
    network: options.network,
    setup: {
      network: setupNetwork,
      containsProcesses: true,
      wrap: (argv, cwd) => bwrapArgv(setupLayout, argv, cwd),
      ...(setupView ? { supervisor: () => setupView.supervisor(supervised(setupLayout)) } : {}),
    },
    containsProcesses: true,
    supervised: perl !== undefined,
    ...(options.perCommand || perl !== undefined
      ? {}
      : { warning: `sandbox: a bubblewrap for each command (${probe.asPid1 ? 'no perl on PATH that the sandbox shows, for its supervisor' : `${probe.bwrap} has no --as-pid-1, which its supervisor needs`}), so each command costs a sandbox start` }),
    maskSecrets() {
      secrets = findWorktreeSecrets(layout.worktree, expose);
      // Setup is over: its sandbox (network, writable package cache) goes.
      void setupView?.close();
      return secrets;
    },
    get masked() {
      return secrets.masked;
    },
    get exposed() {
      return secrets.exposed;
    },
    wrap: (argv, cwd) => bwrapArgv(agentLayout(), argv, cwd),
    ...(agentView ? { supervisor: () => agentView.supervisor(supervised(agentLayout())) } : {}),
    close: async () => {
      await Promise.all([setupView?.close(), agentView?.close()]);
    },
  };
}

/**
 * No sandbox. Where perl works as a child subreaper (found once per process), the run's
 * commands all go to one supervisor outside any sandbox, which forks each and ends what it
 * started: corral itself, a process of 80 MB and more, then forks once a run instead of once
 * a command, which is most of a step's cost on a VM. Elsewhere commands run as they are.
 */
async function unconfined(warning?: string): Promise<Sandbox> {
  const reaper = await findSubreaper();
  const base = warning === undefined ? NO_SANDBOX : { ...NO_SANDBOX, warning };
  if (reaper.kind !== 'perl') return base;
  const slot = new SupervisorSlot('commands', true);
  const argv = supervisorArgv(reaper.program, { reaper: true });
  return {
    ...base,
    supervised: true,
    setup: { ...UNCONFINED, supervisor: () => slot.supervisor(argv) },
    supervisor: () => slot.supervisor(argv),
    close: () => slot.close(),
  };
}

/**
 * The supervisor of one kind of command (setup's, or the agent's and the checks'), started
 * at its first command with `argv`. When `argv` changes (in bubblewrap, the view: a masked
 * secret file deleted), the next command gets a new supervisor with it, so a view is never
 * loosened to fit. One that failed in a sandbox stays, and every later command fails too;
 * an unconfined one (`killable`: a command can kill it like any process) is started again.
 */
class SupervisorSlot {
  private current: { key: string; supervisor: Supervisor } | undefined;
  private readonly closing: Promise<void>[] = [];

  constructor(
    private readonly what: string,
    private readonly killable = false,
  ) {}

  supervisor(argv: string[]): Supervisor {
    const key = argv.join('\0');
    const current = this.current;
    if (current !== undefined && (current.supervisor.broken ? !this.killable : current.key === key)) return current.supervisor;
    if (current !== undefined) this.closing.push(current.supervisor.close());
    this.current = { key, supervisor: new Supervisor(argv, this.what, this.killable) };
    return this.current.supervisor;
  }

  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (current !== undefined) this.closing.push(current.supervisor.close());
    await Promise.all(this.closing);
  }
}

/** The first perl on `searchPath` that commands inside `layout` can see (not in its private /tmp, nor under a cover or a hidden folder). */
function visiblePerl(searchPath: string, layout: BwrapLayout): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    const perl = dir === '' ? undefined : findExecutable('perl', dir);
    if (perl === undefined) continue;
    let real: string;
    try {
      real = realpathSync(perl);
    } catch {
      continue;
    }
    const shown = (file: string): boolean =>
      !within(file, '/tmp') &&
      !within(file, layout.tmpDir) &&
      !layout.hiddenDirs.some((hidden) => within(file, hidden)) &&
      !layout.hiddenFiles.includes(file) &&
      (!layout.covers.some((cover) => within(file, cover.target)) || layout.readViews.some((view) => within(file, view.target)));
    if (shown(perl) && shown(real)) return perl;
  }
  return undefined;
}

function present(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
