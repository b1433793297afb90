import os from 'node:os';
import path from 'node:path';
import { buildToolEnv } from '../run/tool-env.js';
import { loadTicket } from '../ticket/load.js';
import { findRepoRoot } from '../workspace/git.js';
import { createGuard, type Guard } from './guard.js';

/** A private temp dir a dry run pretends the run has, so `$TMPDIR` writes judge as they would in a run. */
const DRY_RUN_TMP = path.join(os.tmpdir(), 'corral-dry-run-tmp');

/**
 * A guard for judging calls without running anything: the ticket's repository stands
 * in for the worktree, with its fence, checks and rules. Without a ticket, the
 * repository around `cwd` with a fence that allows every path.
 */
export async function dryRunGuard(ticketFile: string | undefined, cwd: string, hostEnv: NodeJS.ProcessEnv): Promise<Guard> {
  if (ticketFile !== undefined) {
    const ticket = await loadTicket(ticketFile);
    return createGuard({ worktree: ticket.repo, tmpDir: DRY_RUN_TMP, env: buildToolEnv(hostEnv, ticket.env, DRY_RUN_TMP), ticket });
  }
  const root = (await findRepoRoot(cwd)) ?? cwd;
  return createGuard({
    worktree: root,
    tmpDir: DRY_RUN_TMP,
    env: buildToolEnv(hostEnv, [], DRY_RUN_TMP),
    ticket: { id: 'dry-run', labels: [], allow: ['**'], forbid: [], checks: [], file: '' },
  });
}
