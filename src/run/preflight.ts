import path from 'node:path';
import { DEFAULT_MODEL, missingKeyError } from '../agent/create-model.js';
import { isReplayModel, replayScriptPath } from '../agent/model-id.js';
import { priceOf, type PriceTable } from '../agent/prices.js';
import { loadReplayScript, type ReplayLoader } from '../agent/replay-model.js';
import { UsageError, type Problem } from '../errors.js';
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
  if (ticket.sandbox === 'bwrap') {
    const probe = await probeBubblewrap(options.env.PATH === undefined ? {} : { searchPath: options.env.PATH });
    if (!probe.ok) {
      const from = ticket.given.sandbox === undefined ? ' (set by the config)' : '';
      problems.push(at('sandbox', `bwrap${from}: bubblewrap does not work on this machine: ${probe.reason}`, 'install bubblewrap and allow unprivileged user namespaces, or use `sandbox: auto` (which falls back to none) or `none`'));
    }
  }

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
  } else if (options.requireKey) {
    const noKey = missingKeyError(modelId, options.env);
    if (noKey) problems.push(at('model', noKey.message));
  }
  return problems;
}
