import { loadInstructions, type Instructions } from '../agent/instructions.js';
import { agentLoop, type LoopAnswer, type LoopRequest } from '../agent/loop.js';
import { buildSystemPrompt, buildTaskMessage } from '../agent/system-prompt.js';
import { sandboxConfinement } from '../guard/sandbox/sandbox.js';
import { toolSpecs } from '../tools/index.js';
import type { Outcome } from '../trace/outcome.js';
import { runCliAgentStage } from './agent-cli-stage.js';
import { formatCheckFeedback, runChecks, runTicketCommand } from './checks.js';
import { listedInstructionEntries } from './disk-space.js';
import type { Run } from './prepare.js';
import { WorkspaceForgone, type RunWorkspace, type Workspace } from './workspace-stage.js';
import { nodeModulesKey, restoreNodeModules, storeNodeModules, type RepoCache } from '../workspace/repo-cache.js';

const MAX_TOKENS = 8_192;

/**
 * The ticket's setup, then the agent loop, driven from here: each request the loop
 * yields (a call, the Stop hooks, the checks) is answered by this run's workspace, so the
 * loop never calls up into the run.
 */
export async function runAgent(run: Run, pending: RunWorkspace): Promise<Outcome> {
  const { ticket, options } = run;
  let outcome: Outcome;
  // The workspace is begun once corral's first model request is on its way: making it
  // forks git and loads the guard on this thread, which would hold up a request still
  // connecting. Setup and an agent CLI need it before that.
  if (ticket.setup.length > 0 || ticket.agent !== 'corral') pending.begin();
  // Read from the base commit while setup runs: nothing setup does can change them.
  const instructionsRead = readInstructions(run);
  try {
    if (ticket.setup.length > 0) {
      const workspace = await pending.ready;
      const failed = await runSetup(run, workspace);
      if (failed) return failed;
      workspace.beginAgentPhase();
    }
    const [confinement, instructions] = await Promise.all([sandboxConfinement(ticket.sandbox, ticket.network, options.env.PATH), instructionsRead]);
    if (ticket.agent !== 'corral') {
      // An agent CLI gets the same instructions and task as corral's own loop, and is answered by the same workspace.
      return (outcome = await runCliAgentStage(run, await pending.ready, ticket.agent, buildSystemPrompt(ticket, confinement, instructions), buildTaskMessage(ticket)));
    }
    const loop = agentLoop({
      model: run.model,
      system: buildSystemPrompt(ticket, confinement, instructions),
      taskMessage: buildTaskMessage(ticket),
      tools: toolSpecs(),
      meter: run.meter,
      maxTokens: MAX_TOKENS,
      checkRounds: ticket.checkRounds,
      // A workspace that cannot be made stops the loop at once, even mid-request.
      interrupt: AbortSignal.any([options.interrupt, pending.failed]),
      emit: run.emit,
      prices: run.prices,
      ...(ticket.context ? { context: ticket.context } : {}),
      onFirstRequestSent: () => pending.begin(),
    });
    let next = await loop.next();
    while (!next.done) {
      next = await loop.next(await answer(run, await pending.ready, next.value));
    }
    outcome = next.value;
  } finally {
    // Whatever ended the loop (an interrupt included), the workspace is made or has failed
    // before the result is judged; a loop that ended before its first request went out
    // (interrupted, the API unreachable) needs none, and none is made.
    pending.forgo();
    await pending.ready.catch(() => undefined);
    // Its event belongs before the run's end, however the stage ended (it never throws).
    await instructionsRead;
  }
  // A workspace that could not be made is the run's failure, not the loop's interruption.
  await pending.ready.catch((error: unknown) => {
    if (!(error instanceof WorkspaceForgone)) throw error;
  });
  return outcome;
}

async function answer(run: Run, workspace: Workspace, request: LoopRequest): Promise<LoopAnswer> {
  const { pipeline } = workspace;
  switch (request.kind) {
    case 'tool': {
      const output = await pipeline.run(request.use, request.step, workspace.toolContext(request.signal));
      if (pipeline.halted !== undefined) return { output, blocked: pipeline.halted };
      const limit = run.settings.maxRefusalsInARow.value;
      if (pipeline.refusalsInARow < limit) return { output };
      return { output, blocked: `${pipeline.refusalsInARow} calls in a row were denied or refused (limit ${limit}); stopping instead of burning the budget` };
    }
    case 'stop': {
      const stop = await pipeline.hooks('Stop', { stop_hook_active: request.active }, request.signal, request.step);
      if (pipeline.halted !== undefined) return { blocked: true, reason: stop.reason, halt: pipeline.halted };
      // Claude Code: a Stop hook's additionalContext keeps the turn going, as feedback.
      if (!stop.blocked && stop.context !== undefined) return { blocked: true, reason: stop.context.join('\n\n') };
      return stop;
    }
    case 'checks': {
      const checks = await runChecks(run.ticket.checks, workspace.commands, request.round, run.emit, request.signal);
      const passed = checks.every((check) => check.passed);
      run.emit({ type: 'check_round', round: request.round, passed });
      return { passed, feedback: passed ? '' : formatCheckFeedback(checks, request.round, run.ticket.checkRounds) };
    }
  }
}

/**
 * The repository's AGENTS.md and CLAUDE.md at the base commit, unless the ticket turned
 * them off; which were used is recorded. They only advise the model, so one that cannot
 * be read is a warning, not a failed run.
 */
async function readInstructions(run: Run): Promise<Instructions | undefined> {
  if (run.ticket.instructions === false) {
    run.emit({ type: 'instructions', files: [], omitted: [], off: true });
    return undefined;
  }
  try {
    const listed = listedInstructionEntries(run.ticket.repo, run.baseCommit);
    const instructions = await loadInstructions(run.ticket.repo, run.baseCommit, run.ticket.allow, listed ? { listed } : {});
    run.emit({ type: 'instructions', files: instructions.files.map(({ path, bytes, cut }) => ({ path, bytes, cut })), omitted: instructions.omitted });
    return instructions;
  } catch (error) {
    run.warn(`could not read the repository's AGENTS.md and CLAUDE.md; the run goes on without them: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** The ticket's setup commands, bounded by the interrupt and the minute budget. */
async function runSetup(run: Run, workspace: Workspace): Promise<Outcome> {
  const { ticket, options, meter } = run;
  const deadline = AbortSignal.timeout(Math.max(0, ticket.budget.minutes * 60_000 - meter.elapsedMs()));
  const signal = AbortSignal.any([options.interrupt, deadline]);
  const reuse = await reusableNodeModules(run, workspace);
  for (const command of ticket.setup) {
    const result = await runTicketCommand(command, workspace.setupCommands, signal);
    run.emit({ type: 'setup', name: result.name, exitCode: result.exitCode, timedOut: result.timedOut, durationMs: result.durationMs, output: result.output });
    if (options.interrupt.aborted) return { kind: 'interrupted', finalText: '' };
    if (deadline.aborted) return { kind: 'budget_exhausted', exceeded: { which: 'minutes', detail: `${ticket.budget.minutes} minute limit reached during setup` }, finalText: '' };
    if (!result.passed) {
      return { kind: 'setup_failed', reason: `setup command \`${command.run}\` ${result.timedOut ? 'timed out' : `exited ${result.exitCode}`}` };
    }
  }
  // Kept as setup left it, before the agent's first command can change it.
  if (reuse !== undefined && !reuse.restored) {
    await storeNodeModules(reuse.cache, reuse.key, workspace.worktree.dir).catch((error: unknown) => run.warn(`could not keep node_modules for the next run: ${describe(error)}`));
  }
  return undefined;
}

/**
 * The `node_modules` an earlier run's setup made from the same lockfile, put into the
 * worktree before setup runs (which then has little left to do); undefined when nothing
 * can be reused or kept (no cache folder, no lockfile).
 */
async function reusableNodeModules(run: Run, workspace: Workspace): Promise<{ cache: RepoCache; key: string; restored: boolean } | undefined> {
  const cache = workspace.repoCache;
  if (cache === null) return undefined;
  const key = await nodeModulesKey(workspace.worktree.dir, run.ticket.setup.map((command) => command.run));
  if (key === null) return undefined;
  const restored = await restoreNodeModules(cache, key, workspace.worktree.dir).catch((error: unknown) => {
    run.warn(`could not reuse the stored node_modules: ${describe(error)}`);
    return false;
  });
  return { cache, key, restored };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
