import { homedir } from 'node:os';
import path from 'node:path';
import { missingKeyError } from '../agent/create-model.js';
import { DEFAULT_MODEL } from '../ticket/model-id.js';
import { isReplayModel, replayScriptPath } from '../ticket/model-id.js';
import { priceOf, type PriceTable } from '../config/prices.js';
import { loadReplayScript, type ReplayLoader } from '../agent/replay-model.js';
import { UsageError, type Problem } from '../errors.js';
import { checkReadPaths } from '../guard/sandbox/home-view.js';
import { checkExposed } from '../guard/sandbox/worktree-secrets.js';
import { probeBubblewrap } from '../guard/sandbox/probe.js';
import type { Ticket } from '../ticket/types.js';

export interface PreflightOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Whether a real model's missing API key counts (`corral run`) or not (`corral check`). */
  requireKey: boolean;
  /** Prices from config, beside the ones corral knows. */
  prices?: PriceTable;
  /** How a replay script is loaded; default: read and checked afresh. */
  loadReplayScript?: ReplayLoader;
  /**
   * Nobody is watching (CI, `--unattended`): a ticket whose sandbox nobody chose needs a
   * working bubblewrap, so an unconfined run is always someone's decision.
   */
  requireSandbox?: boolean;
}

export function modelOf(ticket: Ticket): string {
  return ticket.model ?? DEFAULT_MODEL;
}

/**
 * Everything that would stop a ticket at run time, found before any ticket runs, so a
 * batch never half-runs: settings this machine cannot enforce (refused, not ignored: a
 * sandbox that is silently dropped fails open), a dollar budget with no price to enforce
 * it, a broken replay script, a missing API key.
 */
export async function preflightTicket(ticket: Ticket, options: PreflightOptions): Promise<Problem[]> {
  const file = path.relative(options.cwd, ticket.file) || ticket.file;
  const at = (field: string, message: string, hint?: string): Problem => ({ file, line: 1, column: 1, field, message, ...(hint ? { hint } : {}) });
  const problems: Problem[] = [];
  if (ticket.sandbox === 'bwrap' || (ticket.sandbox === 'auto' && !ticket.sandboxChosen && options.requireSandbox)) {
    const probe = await probeBubblewrap(options.env.PATH === undefined ? {} : { searchPath: options.env.PATH });
    if (!probe.ok && ticket.sandbox === 'bwrap') {
      const from = ticket.given.sandbox === undefined ? ' (set by the config)' : '';
      problems.push(at('sandbox', `bwrap${from}: bubblewrap does not work on this machine: ${probe.reason}`, 'install bubblewrap and allow unprivileged user namespaces, or use `sandbox: auto` (which falls back to none) or `none`'));
    } else if (!probe.ok) {
      problems.push(
        at(
          'sandbox',
          `an unattended run needs a sandbox, and bubblewrap does not work on this machine: ${probe.reason}`,
          'install bubblewrap (`apt-get install bubblewrap`; see docs/sandbox.md), or say `sandbox: none` (or `auto`) in the ticket or corral.yaml to run commands unconfined on purpose',
        ),
      );
    }
  }
  problems.push(...sandboxFieldProblems(ticket, options.env, at));

  const modelId = modelOf(ticket);
  if (ticket.budget.usd !== undefined && !isReplayModel(modelId) && priceOf(modelId, options.prices) === null) {
    problems.push(at('budget.usd', `corral has no price for model ${modelId}, so a dollar budget cannot be enforced`, 'drop budget.usd, use a priced model, or give its price under `prices:` in corral.yaml'));
  }
  if (isReplayModel(modelId)) {
    const script = replayScriptPath(modelId);
    try {
      await (options.loadReplayScript ?? loadReplayScript)(script, path.relative(options.cwd, script) || script);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      problems.push(...(error.problems.length > 0 ? error.problems : [at('model', error.message)]));
    }
  } else if (options.requireKey && ticket.agent !== 'codex') {
    // Codex reads its own key or login (OPENAI_API_KEY, CODEX_API_KEY, its auth file): its run says what it lacks.
    const noKey = missingKeyError(modelId, options.env);
    if (noKey) problems.push(at('model', noKey.message));
  }
  return problems;
}

/** `sandbox.read` folders that would show credentials, and `sandbox.expose` entries that are not worktree paths: each a problem of its own. */
function sandboxFieldProblems(ticket: Ticket, env: NodeJS.ProcessEnv, at: (field: string, message: string, hint?: string) => Problem): Problem[] {
  const home = env.HOME && path.isAbsolute(env.HOME) ? path.resolve(env.HOME) : homedir();
  const problemOf = (check: () => unknown): string | null => {
    try {
      check();
      return null;
    } catch (error) {
      if (error instanceof UsageError) return error.message.replace(/^sandbox: (read|expose): /, '');
      throw error;
    }
  };
  const problems: Problem[] = [];
  ticket.sandboxRead.forEach((folder, index) => {
    const problem = problemOf(() => checkReadPaths([folder], home));
    if (problem !== null) problems.push(at(`sandbox.read.${index}`, problem, 'name the folder a tool needs (`~/.cache/ms-playwright`), never one that holds credentials'));
  });
  ticket.sandboxExpose.forEach((file, index) => {
    const problem = problemOf(() => checkExposed([file]));
    if (problem !== null) problems.push(at(`sandbox.expose.${index}`, problem));
  });
  return problems;
}
