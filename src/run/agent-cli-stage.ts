import { rm } from 'node:fs/promises';
import path from 'node:path';
import { agentControlDir, driverOf } from '../agents/drivers.js';
import { findAgentCli, type ExternalAgent } from '../agents/find-cli.js';
import { modelAccess } from '../agents/model-access.js';
import { runCliAgent } from '../agents/run-cli-agent.js';
import { corralPackage } from '../package.js';
import { DEFAULT_MODEL, isReplayModel } from '../ticket/model-id.js';
import type { Outcome } from '../trace/outcome.js';
import { formatCheckFeedback, runChecks } from './checks.js';
import type { Run } from './prepare.js';
import type { Workspace } from './workspace-stage.js';

/**
 * The agent stage for a ticket an agent CLI works (`agent: claude-code | codex`): the
 * CLI runs in the worktree inside the run's sandbox, and this run answers what it asks,
 * as it answers corral's own loop: every call through the one call pipeline (hooks, the
 * guard, the approver), then the Stop hooks and the checks.
 */
export async function runCliAgentStage(run: Run, workspace: Workspace, kind: ExternalAgent, system: string, task: string): Promise<Outcome> {
  const { ticket, options, settings, meter } = run;
  const found = await findAgentCli(kind, settings.agentCommands[kind]?.value, options.env);
  // Checked before the run started; a CLI gone since is the machine's failure, not the agent's.
  if (!found.ok) return { kind: 'internal_error', reason: `${found.message} (${found.hint})` };
  const { cli } = found;
  run.emit({ type: 'agent', kind, cli: cli.file, version: cli.version });
  const controlDir = agentControlDir(run.runDir);
  // The control folder is shown read-only at its own path in the sandbox: the proxy's socket goes there.
  const access = await modelAccess(kind, options.env, workspace.sandbox.kind === 'bwrap' ? controlDir : undefined);
  const { pipeline } = workspace;
  const tmpDir = workspace.commands.env.TMPDIR ?? path.join(path.dirname(workspace.worktree.dir), 'tmp');
  const stateDir = path.join(tmpDir, '.corral-agent');
  // The agent's home is the run's own: its config, sessions and caches never reach the user's ~/.claude or ~/.codex.
  const env = { ...workspace.commands.env, HOME: path.join(stateDir, 'home') };
  const limit = settings.maxRefusalsInARow.value;
  try {
    return await runCliAgent({
      driver: driverOf(kind),
      cli,
      worktree: workspace.worktree.dir,
      controlDir,
      stateDir,
      env,
      modelEnv: access.env,
      modelCommand: access.command,
      ...(access.baseUrl === undefined ? {} : { apiBaseUrl: access.baseUrl }),
      sandbox: workspace.sandbox,
      confined: workspace.sandbox.kind === 'bwrap',
      hookCommand: hookCommand(kind),
      system,
      task,
      ...(cliModel(run, kind) === undefined ? {} : { model: cliModel(run, kind)! }),
      checkRounds: ticket.checkRounds,
      interrupt: options.interrupt,
      remainingMs: ticket.budget.minutes * 60_000 - meter.elapsedMs(),
      minutes: ticket.budget.minutes,
      emit: run.emit,
      prices: run.prices,
      judge: async (call, id, step, signal) => {
        const decided = await pipeline.decide({ id, name: call.tool, input: call.input }, step, signal);
        const stop =
          pipeline.halted ??
          (pipeline.refusalsInARow >= limit ? `${pipeline.refusalsInARow} calls in a row were denied or refused (limit ${limit}); stopping instead of burning the budget` : undefined);
        return { effect: decided.allowed ? 'allow' : 'deny', reason: decided.reason, ...(stop === undefined ? {} : { stop }) };
      },
      budget: {
        onTurn: (usage, cost) => meter.record(usage, cost),
        exceeded: () => {
          const exceeded = meter.exceeded();
          // The meter says when there is no room for another step; a CLI's turn is counted once made, so only one past the limit is over it.
          if (exceeded?.which === 'steps' && meter.steps <= ticket.budget.steps) return null;
          return exceeded;
        },
        get steps() {
          return meter.steps;
        },
      },
      stopHooks: async (active, step, signal) => {
        const stop = await pipeline.hooks('Stop', { stop_hook_active: active }, signal, step);
        if (pipeline.halted !== undefined) return { blocked: true, reason: stop.reason, halt: pipeline.halted };
        if (!stop.blocked && stop.context !== undefined) return { blocked: true, reason: stop.context.join('\n\n') };
        return { blocked: stop.blocked, reason: stop.reason };
      },
      checks: async (round, signal) => {
        const checks = await runChecks(ticket.checks, workspace.commands, round, run.emit, signal);
        const passed = checks.every((check) => check.passed);
        run.emit({ type: 'check_round', round, passed });
        return { passed, feedback: passed ? '' : formatCheckFeedback(checks, round, ticket.checkRounds) };
      },
    });
  } finally {
    await access.close();
    // A control folder outside the run directory (a run directory too deep for a socket path) goes with the run.
    if (!controlDir.startsWith(`${run.runDir}${path.sep}`)) await rm(controlDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * The model the CLI is told to use: the ticket's or the config's; none for a replay script
 * (corral's own stand-in for a model), nor for Codex when only corral's default (a Claude
 * model) would name one: Codex keeps its own default then.
 */
function cliModel(run: Run, kind: ExternalAgent): string | undefined {
  const model = run.ticket.model;
  if (model === undefined || isReplayModel(model)) return undefined;
  if (kind === 'codex' && model === DEFAULT_MODEL && run.settings.model.from === 'default') return undefined;
  return model;
}

/**
 * `corral guard hook --agent <kind>` as a shell command the agent runs for each call: this
 * node and this corral, by absolute path, so it is the same corral whatever PATH says.
 */
function hookCommand(kind: ExternalAgent): string {
  const entry = path.join(corralPackage().dir, 'bin', 'corral.cjs');
  return [process.execPath, entry, 'guard', 'hook', '--agent', kind].map(shellQuote).join(' ');
}

function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
