import path from 'node:path';
import { loadConfig, type LoadedConfig } from '../config/load.js';
import { applySettings, priceTable, settingsFrom, type Settings } from '../config/settings.js';
import { UsageError, type Problem } from '../errors.js';
import { discoverTickets } from '../ticket/discover.js';
import { findDuplicateIds } from '../ticket/duplicate-ids.js';
import { loadTicket } from '../ticket/load.js';
import type { FindRepoAndCommit } from '../ticket/references.js';
import type { Ticket } from '../ticket/types.js';
import { resolveCommit, sharedRepoLookups } from '../git/git.js';
import { hookProblems } from './hook-preflight.js';
import { preflightTicket, type PreflightOptions } from './preflight.js';
import { findAgentCli, type ExternalAgent, type FoundCli } from '../agents/find-cli.js';
import type { AgentKind } from '../ticket/types.js';

export interface LoadedTicket {
  /** The path as shown to the user (relative to cwd). */
  shown: string;
  /** The ticket with its config applied (and `--model`): what runs. */
  ticket?: Ticket;
  /** The user and project config of the ticket's repository. */
  settings?: Settings;
  /** The dollar cap the ticket runs with (its own, or the config's default). */
  budgetUsd?: number;
  problems: Problem[];
}

export interface LoadTicketsOptions extends PreflightOptions {
  model?: string;
  /** `--agent`: who works every ticket. */
  agent?: AgentKind;
  /** A batch dollar cap is set (`--max-usd`): each ticket needs a cap of its own to be weighed against it. */
  requireUsdBudget?: boolean;
  /** The worktree starts from the host's working tree (`--from-worktree`), not the base commit. */
  fromWorktree?: boolean;
  /** How the tickets' repositories are found: the command's own lookups (sharedRepoLookups), maybe asked already. */
  findRepo?: FindRepoAndCommit;
}

/**
 * Finds, loads and preflights every ticket of a command line, collecting every problem
 * of every file (duplicate ids across files included) instead of stopping at the first.
 * A config file with problems is listed once, as an entry of its own.
 */
export async function loadTickets(inputs: string[], options: LoadTicketsOptions): Promise<LoadedTicket[]> {
  const files = await discoverTickets(inputs.map((p) => path.resolve(options.cwd, p)));
  if (files.length === 0) throw new UsageError(`no ticket files found in ${inputs.join(', ')}`);
  const loaded: LoadedTicket[] = [];
  const configs = new Map<string, Promise<LoadedConfig>>();
  // The hooks of a repository are checked once per base they run against, and said once.
  const hooksChecked = new Set<string>();
  // Each agent CLI is looked for and asked its version once per command it is named by.
  const clis = new Map<string, Promise<FoundCli>>();
  const configOf = (repo: string): Promise<LoadedConfig> => {
    let config = configs.get(repo);
    if (config === undefined) configs.set(repo, (config = loadConfig(repo, options.env, options.cwd)));
    return config;
  };
  // The tickets of a folder share its repository and HEAD: git is asked once for them all.
  const findRepo = options.findRepo ?? sharedRepoLookups();
  for (const file of files) {
    const shown = path.relative(options.cwd, file) || file;
    try {
      const ticket = await loadTicket(shown, findRepo);
      const config = await configOf(ticket.repo);
      if (config.problems.length > 0) {
        loaded.push({ shown, ticket, problems: [] });
        continue;
      }
      const settings = settingsFrom(config);
      const applied = applySettings(ticket, settings, { ...(options.model ? { modelOverride: options.model } : {}), ...(options.agent ? { agentOverride: options.agent } : {}), shownFile: shown });
      const problems = [...applied.problems, ...(await preflightTicket(applied.ticket, { env: options.env, cwd: options.cwd, requireKey: options.requireKey, prices: priceTable(settings), ...(options.loadReplayScript ? { loadReplayScript: options.loadReplayScript } : {}), requireSandbox: options.requireSandbox ?? false }))];
      if (settings.hookEntries.length > 0) {
        const commit = options.fromWorktree ? null : (applied.ticket.baseCommit ?? (await resolveCommit(applied.ticket.repo, applied.ticket.base)));
        const key = `${applied.ticket.repo}\0${commit ?? 'checkout'}`;
        if ((options.fromWorktree || commit !== null) && !hooksChecked.has(key)) {
          hooksChecked.add(key);
          const source = commit === null ? ({ kind: 'checkout' } as const) : ({ kind: 'commit', commit } as const);
          problems.push(...(await hookProblems(settings.hookEntries, applied.ticket.repo, source, options.env, options.cwd)));
        }
      }
      if (applied.ticket.agent !== 'corral' && options.requireKey) problems.push(...(await agentCliProblems(applied.ticket.agent, settings, options.env, shown, clis)));
      const budgetUsd = applied.ticket.budget.usd;
      if (options.requireUsdBudget && budgetUsd === undefined) {
        problems.push({ file: shown, line: 1, column: 1, field: 'budget.usd', message: 'no dollar budget: --max-usd starts a ticket only when what the batch has left covers the ticket\'s own budget.usd', hint: 'give the ticket (or `budget:` in corral.yaml) a `usd:` cap, or run without --max-usd' });
      }
      loaded.push({ shown, ticket: applied.ticket, settings, ...(budgetUsd === undefined ? {} : { budgetUsd }), problems });
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      // A problem with no position is still a problem of this file.
      const problems = error.problems.length > 0 ? error.problems : [{ file: shown, line: 1, column: 1, field: '', message: error.message }];
      loaded.push({ shown, problems });
    }
  }
  const seen = new Set<string>();
  for (const config of await Promise.all(configs.values())) {
    for (const problem of config.problems) {
      if (seen.has(problem.file)) continue;
      seen.add(problem.file);
      loaded.push({ shown: problem.file, problems: config.problems.filter((p) => p.file === problem.file) });
    }
  }
  const tickets = loaded.flatMap((l) => (l.ticket ? [l.ticket] : []));
  for (const duplicate of findDuplicateIds(tickets, options.cwd)) {
    loaded.find((l) => l.shown === duplicate.file)?.problems.push(duplicate);
  }
  return loaded;
}

/** A ticket's agent CLI that is missing or too old, as a problem of the ticket: nothing runs (exit 64). */
async function agentCliProblems(kind: ExternalAgent, settings: Settings, env: NodeJS.ProcessEnv, shown: string, clis: Map<string, Promise<FoundCli>>): Promise<Problem[]> {
  const configured = settings.agentCommands[kind];
  const key = `${kind}\0${configured?.value ?? ''}`;
  let found = clis.get(key);
  if (found === undefined) clis.set(key, (found = findAgentCli(kind, configured?.value, env)));
  const result = await found;
  if (result.ok) return [];
  const where = configured === undefined ? '' : ` (agents.${kind}.command, ${configured.from})`;
  return [{ file: shown, line: 1, column: 1, field: 'agent', message: `${result.message}${where}`, hint: result.hint }];
}
