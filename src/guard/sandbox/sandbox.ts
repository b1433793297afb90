import { UsageError } from '../../errors.js';
import type { SandboxMode } from '../../ticket/types.js';
import type { CommandSandbox } from '../../tools/run-command.js';
import { bwrapArgv } from './bwrap-argv.js';
import { sandboxLayout } from './layout.js';
import { probeBubblewrap } from './probe.js';

// The operating system as the boundary behind the guard: every Bash call, check and
// setup command of a run goes through one Sandbox, built once when the worktree exists.
// Hooks (trusted) and corral's own Read/Write/Edit (in-process, guarded) do not.

export interface Sandbox extends CommandSandbox {
  kind: 'bwrap' | 'none';
  /** Whether commands can reach the network (always, without a sandbox). */
  network: boolean;
  /** One line for the summary and the trace when `auto` found no working bubblewrap. */
  warning?: string;
}

/** Commands run as they are. */
export const NO_SANDBOX: Sandbox = { kind: 'none', network: true, wrap: (argv) => argv };

export interface SandboxOptions {
  mode: SandboxMode;
  /** The run's worktree: the one tree commands may write. */
  worktree: string;
  /** The run's private temp dir ($TMPDIR): writable, and the sandbox's /tmp. */
  tmpDir: string;
  /** The ticket's `network: true`. */
  network: boolean;
  /** The HOME commands see, whose credential files are hidden (the user's own always is). */
  home?: string;
  /** Where to look for bwrap, as in PATH; default corral's own PATH. */
  searchPath?: string;
  /** Files in the worktree no command may change (hook scripts). */
  protectedFiles?: string[];
}

/**
 * What the model is told about its sandbox (a bubblewrap sandbox and whether it has the
 * network, or nothing), known before the sandbox exists: the probe behind it is the one
 * `createSandbox` then uses, so the two always agree.
 */
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
  if (options.mode === 'none') return NO_SANDBOX;
  const probe = await probeBubblewrap(options.searchPath === undefined ? {} : { searchPath: options.searchPath });
  if (!probe.ok) {
    if (options.mode === 'bwrap') throw new UsageError(`sandbox: bwrap: bubblewrap does not work on this machine: ${probe.reason}`);
    return { ...NO_SANDBOX, warning: `sandbox: none (bubblewrap does not work here: ${probe.reason}); commands run unconfined` };
  }
  const layout = sandboxLayout({
    bwrap: probe.bwrap,
    disableUserns: probe.disableUserns,
    worktree: options.worktree,
    tmpDir: options.tmpDir,
    network: options.network,
    ...(options.home ? { homes: [options.home] } : {}),
    ...(options.protectedFiles ? { protectedFiles: options.protectedFiles } : {}),
  });
  return { kind: 'bwrap', network: options.network, containsProcesses: true, wrap: (argv, cwd) => bwrapArgv(layout, argv, cwd) };
}

