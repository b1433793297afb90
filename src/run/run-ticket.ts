import { existsSync } from 'node:fs';
import { decideRunStart } from '../guard/run-start.js';
import { runStartRules } from '../policy/stack.js';
import type { Ticket } from '../ticket/types.js';
import { decideStatus, exitCodeOf, type Outcome } from '../trace/outcome.js';
import { extractFollowUps, type RunResult } from '../trace/result.js';
import { runAgent, type AgentEnd } from './agent-stage.js';
import type { CallPipeline } from './call-pipeline.js';
import { judgeRun, type Judgement } from './judge.js';
import { prepareRun, type Run, type RunOptions } from './prepare.js';
import { openWorkspace } from './workspace-stage.js';

export type { RunOptions } from './prepare.js';

/** What the stages leave for the record, filled in as each ends. */
interface RunEnd {
  agent: AgentEnd;
  judgement?: Judgement;
  /** The calls the run made (absent when it never got a workspace). */
  calls?: Pick<CallPipeline, 'calls' | 'denied' | 'asked'>;
  sandbox?: 'bwrap' | 'none';
  /** Where the worktree stays (`--keep`, or a patch that could not be written). */
  kept?: string;
}

/**
 * One ticket, as named stages each done once: prepare → open the workspace → run the
 * agent → judge → record. Whatever happens in between, the run is recorded.
 */
export async function runTicket(ticket: Ticket, options: RunOptions): Promise<RunResult> {
  const run = await prepareRun(ticket, options);
  const end: RunEnd = { agent: { outcome: undefined, checks: [], checkRounds: 0 } };
  try {
    await runStages(run, end);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // Cleanup never hides a judged result: a failure after the judge is a warning.
    if (end.judgement) run.warnings.push(`could not clean up after the run: ${reason}`);
    else end.agent.outcome = { kind: 'internal_error', reason };
  }
  return recordRun(run, end);
}

async function runStages(run: Run, end: RunEnd): Promise<void> {
  end.agent.outcome = await gateRunStart(run);
  if (end.agent.outcome) return;
  await using workspace = openWorkspace(run);
  // An agent stage that fails still has its work judged and kept.
  end.agent = await runAgent(run, workspace).catch((error: unknown) => ({ ...end.agent, outcome: { kind: 'internal_error', reason: error instanceof Error ? error.message : String(error) } }));
  end.judgement = await judgeRun(run, workspace, end.agent.outcome);
  const made = await workspace.ready.catch(() => undefined);
  if (made) Object.assign(end, { calls: made.pipeline, sandbox: made.sandbox.kind });
  if (workspace.kept) end.kept = workspace.kept;
}

/**
 * The `hook: run.start` rules of config and ticket, over the ticket alone: a deny ends
 * the run before any worktree exists; an ask goes to the approver like a call would.
 */
async function gateRunStart({ ticket, settings, approver, options, emit }: Run): Promise<Outcome> {
  const rules = [...settings.runStart, ...runStartRules([{ scope: 'ticket', file: ticket.policy, source: ticket.file }])];
  const decision = decideRunStart(rules, ticket);
  if (decision === null) return undefined;
  let approved = false;
  if (decision.effect === 'ask') {
    const request = { ticketId: ticket.id, step: 0, tool: 'run.start', input: { ticket: ticket.id, labels: ticket.labels.join(', ') }, decision, commands: [], paths: [], worktree: ticket.repo };
    approved = (await approver.ask(request, options.interrupt).catch(() => ({ approved: false }) as const)).approved;
  }
  emit({ type: 'run_gate', ...decision, ...(decision.effect === 'ask' ? { approved } : {}) });
  if (options.interrupt.aborted) return { kind: 'interrupted', finalText: '' };
  if (approved) return undefined;
  const how = decision.effect === 'deny' ? 'was denied' : 'needed approval and was refused';
  return { kind: 'not_started', reason: `the run ${how} by run.start rule ${decision.rule} (${decision.source ?? decision.scope}): ${decision.reason}` };
}

/** The last stage: the `end` event, and the result the summary and reports are made from. */
function recordRun(run: Run, end: RunEnd): RunResult {
  const { outcome } = end.agent;
  const judged = end.judgement ?? { ...decideStatus(outcome, { ok: true, verdicts: [] }, run.ticket), changes: [], hostChanges: [] };
  const { status, reason } = judged;
  const exitCode = exitCodeOf(status);
  run.emit({ type: 'end', status, exitCode, reason });
  const finalText = outcome && 'finalText' in outcome ? outcome.finalText : '';
  return {
    runId: run.runId,
    ticket: run.ticketRef,
    status,
    exitCode,
    reason,
    ...(outcome?.kind === 'budget_exhausted' ? { budgetExhausted: outcome.exceeded.which } : {}),
    model: run.modelId,
    steps: run.meter.steps,
    usage: run.meter.usage,
    costUsd: run.meter.costUsd,
    durationMs: run.now() - run.startedAt,
    baseCommit: run.baseCommit,
    changes: judged.changes,
    ...(judged.hostChanges.length > 0 ? { hostChanges: judged.hostChanges } : {}),
    checks: end.agent.checks,
    checkRoundsUsed: end.agent.checkRounds,
    toolCalls: end.calls?.calls ?? 0,
    denied: end.calls?.denied ?? [],
    asked: end.calls?.asked ?? [],
    ...(existsSync(run.approvalsFile) ? { approvalsNeeded: run.approvalsFile } : {}),
    followUps: extractFollowUps(finalText),
    finalText,
    runDir: run.runDir,
    ...(judged.patch ? { patch: judged.patch } : {}),
    trace: run.traceFile,
    ...(judged.branch ? { branch: judged.branch } : {}),
    ...(end.kept ? { worktree: end.kept } : {}),
    ...(end.sandbox ? { sandbox: end.sandbox } : {}),
    warnings: run.warnings,
  };
}
