import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { settingsFrom, toolEnvChanges } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { buildToolEnv } from './tool-env.js';
import { loadTicket } from '../ticket/load.js';
import type { SandboxMode } from '../ticket/types.js';
import { findRepoRoot } from '../git/git.js';
import type { GuardSandbox } from '../guard/facts.js';
import { createGuard, type Guard } from '../guard/guard.js';
import { probeBubblewrap } from '../guard/sandbox/probe.js';

/** A private temp dir a dry run pretends the run has, so `$TMPDIR` writes judge as they would in a run. */
const DRY_RUN_TMP = path.join(os.tmpdir(), 'corral-dry-run-tmp');

/**
 * A guard for judging calls without running anything: the ticket's repository stands
 * in for the worktree, with the user and project config, and the ticket's fence, checks
 * and rules. Without a ticket, the repository around `cwd` with a fence that allows
 * every path. The sandbox is the one a run would get here (the ticket's or the config's
 * choice, `auto` probed on this machine) unless `sandbox` names one. `repoRoot`: the
 * repository around `cwd`, when the caller has asked git for it already.
 */
export async function dryRunGuard(ticketFile: string | undefined, cwd: string, hostEnv: NodeJS.ProcessEnv, sandbox?: GuardSandbox['kind'], repoRoot?: Promise<string | null>): Promise<Guard> {
  const ticket = ticketFile === undefined ? undefined : await loadTicket(ticketFile);
  const root = ticket?.repo ?? (await (repoRoot ?? findRepoRoot(cwd))) ?? cwd;
  const loaded = await loadConfig(root, hostEnv, cwd);
  if (loaded.problems.length > 0) throw new UsageError(`${loaded.problems.length} problem(s) in the config`, loaded.problems);
  const settings = settingsFrom(loaded);
  const layers = settings.policyLayers;
  const mode = sandbox ?? ticket?.given.sandbox ?? settings.sandbox.value;
  // As a run gets it: config's env first, the ticket's winning.
  const configEnv = Object.fromEntries(Object.entries(settings.env).map(([name, sourced]) => [name, sourced.value]));
  const assumed: GuardSandbox = { kind: await sandboxKindOf(mode, hostEnv), network: ticket?.network ?? false };
  if (ticket !== undefined) {
    return createGuard({ worktree: ticket.repo, tmpDir: DRY_RUN_TMP, env: buildToolEnv(hostEnv, toolEnvChanges(settings, { ...configEnv, ...ticket.env }), { tmpDir: DRY_RUN_TMP, offline: !assumed.network }), ticket, layers, sandbox: assumed });
  }
  return createGuard({
    worktree: root,
    tmpDir: DRY_RUN_TMP,
    env: buildToolEnv(hostEnv, toolEnvChanges(settings, configEnv), { tmpDir: DRY_RUN_TMP, offline: !assumed.network }),
    ticket: { id: 'dry-run', labels: [], allow: ['**'], forbid: [], checks: [], file: '' },
    layers,
    sandbox: assumed,
  });
}

/** What a run would get for `mode` on this machine: `auto` is bubblewrap where it works. */
async function sandboxKindOf(mode: SandboxMode, env: NodeJS.ProcessEnv): Promise<GuardSandbox['kind']> {
  if (mode !== 'auto') return mode;
  const probe = await probeBubblewrap(env.PATH === undefined ? {} : { searchPath: env.PATH });
  return probe.ok ? 'bwrap' : 'none';
}
