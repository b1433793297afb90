import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../config/load.js';
import { settingsFrom } from '../config/settings.js';
import { UsageError } from '../errors.js';
import { buildToolEnv } from '../run/tool-env.js';
import { loadTicket } from '../ticket/load.js';
import { findRepoRoot } from '../workspace/git.js';
import { createGuard, type Guard } from './guard.js';
import type { PolicyLayer } from './rules/policy.js';

/** A private temp dir a dry run pretends the run has, so `$TMPDIR` writes judge as they would in a run. */
const DRY_RUN_TMP = path.join(os.tmpdir(), 'corral-dry-run-tmp');

/**
 * A guard for judging calls without running anything: the ticket's repository stands
 * in for the worktree, with the user and project config, and the ticket's fence, checks
 * and rules. Without a ticket, the repository around `cwd` with a fence that allows
 * every path.
 */
export async function dryRunGuard(ticketFile: string | undefined, cwd: string, hostEnv: NodeJS.ProcessEnv): Promise<Guard> {
  const ticket = ticketFile === undefined ? undefined : await loadTicket(ticketFile);
  const root = ticket?.repo ?? (await findRepoRoot(cwd)) ?? cwd;
  const layers = await configLayers(root, hostEnv, cwd);
  if (ticket !== undefined) {
    return createGuard({ worktree: ticket.repo, tmpDir: DRY_RUN_TMP, env: buildToolEnv(hostEnv, ticket.env, DRY_RUN_TMP), ticket, layers });
  }
  return createGuard({
    worktree: root,
    tmpDir: DRY_RUN_TMP,
    env: buildToolEnv(hostEnv, [], DRY_RUN_TMP),
    ticket: { id: 'dry-run', labels: [], allow: ['**'], forbid: [], checks: [], file: '' },
    layers,
  });
}

async function configLayers(repo: string, env: NodeJS.ProcessEnv, cwd: string): Promise<PolicyLayer[]> {
  const loaded = await loadConfig(repo, env, cwd);
  if (loaded.problems.length > 0) throw new UsageError(`${loaded.problems.length} problem(s) in the config`, loaded.problems);
  return settingsFrom(loaded).policyLayers;
}
