import { existsSync } from 'node:fs';
import { decideRunStart } from '../guard/run-start.js';
import { runStartRules } from '../policy/stack.js';
import type { Ticket } from '../ticket/types.js';
import { runResultOf } from '../trace/fold.js';
import { decideStatus, exitCodeOf, type Outcome } from '../trace/outcome.js';
import type { RunResult } from '../trace/result.js';
import { runAgent } from './agent-stage.js';
import { judgeRun, type Judgement } from './judge.js';
import { prepareRun, type Run, type RunOptions } from './prepare.js';
import { openWorkspace } from './workspace-stage.js';

export type { RunOptions } from './prepare.js';

/** What the stages leave for the record, filled in as each ends. */
interface RunEnd {
  outcome: Outcome;
  judgement?: Judgement;
  /** Where the worktree stays (`--keep`, or a patch that could not be written). */
  kept?: string;
}

/**
 * One ticket, as named stages each done once: prepare → open the workspace → run the
 * agent → judge → record. Whatever happens in between, the run is recorded, and its
 * result is the fold of the events it recorded.
 */
export async function runTicket(ticket: Ticket, options: RunOptions): Promise<RunResult> {
  const run = await prepareRun(ticket, options);
  const end: RunEnd = { outcome: undefined };
  try {
    await runStages(run, end);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    // Cleanup never hides a judged result: a failure after the judge is a warning.
    if (end.judgement) run.warn(`could not clean up after the run: ${reason}`);
    else end.outcome = { kind: 'internal_error', reason };
  }
  return recordRun(run, end);
}

async function runStages(run: Run, end: RunEnd): Promise<void> {
  // The first line is written as the run is prepared: a run that cannot be recorded makes no worktree.
  if (run.traceFailure()) return;
  end.outcome = await gateRunStart(run);
  if (end.outcome) return;
  // Made once the agent stage begins it (when its first model request is on its way).
  await using workspace = openWorkspace(run);
  // An agent stage that fails still has its work judged and kept.
  end.outcome = await runAgent(run, workspace).catch((error: unknown): Outcome => ({ kind: 'internal_error', reason: error instanceof Error ? error.message : String(error) }));
  // A stage that ended before it began the workspace never needs one.
  workspace.forgo();
  end.judgement = await judgeRun(run, workspace, end.outcome);
  // Without a whole trace the run's record is not to be trusted, and the disk is likely
  // full: the worktree stays, whether or not a patch got written.
  const traceFailure = run.traceFailure();
  if (traceFailure && !workspace.kept) workspace.keep(`the trace could not be written (${traceFailure.code ?? 'write error'})`);
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

/** The last stage: where everything was kept, the `end` event, and the result folded from the run's events. */
function recordRun(run: Run, end: RunEnd): RunResult {
  const { outcome } = end;
  const judged: Judgement = end.judgement ?? decideStatus(outcome, { ok: true, verdicts: [] }, run.ticket);
  const { patch, branch } = judged;
  const stopped = run.traceFailure() !== null;
  run.emit({
    type: 'kept',
    ...(patch ? { patch } : {}),
    ...(branch ? { branch } : {}),
    ...(end.kept ? { worktree: end.kept } : {}),
    ...(existsSync(run.approvalsFile) ? { approvalsNeeded: run.approvalsFile } : {}),
  });
  // Read after `kept`: a trace that fails on its last lines is as incomplete as any other.
  const { status, reason } = traceFailedVerdict(run, end, judged, stopped) ?? judged;
  const budget = outcome?.kind === 'budget_exhausted' ? { budget: outcome.exceeded.which } : {};
  run.emit({ type: 'end', status, exitCode: exitCodeOf(status), reason, durationMs: run.now() - run.startedAt, ...budget });
  return runResultOf(run.fold.current());
}

/**
 * A run whose trace could not be written ends as an internal error (exit 70): its record is
 * incomplete. The reason says why, whether the run was stopped for it, and where its work is.
 */
function traceFailedVerdict(run: Run, end: RunEnd, judged: Judgement, stopped: boolean): Pick<Judgement, 'status' | 'reason'> | undefined {
  const failure = run.traceFailure();
  if (!failure) return undefined;
  const where = end.kept
    ? `; the worktree is kept at ${end.kept}`
    : !end.judgement
      ? '; nothing was run'
      : judged.branch
        ? `; the work was committed to ${judged.branch}`
        : judged.patch
          ? `; the patch is ${judged.patch}`
          : '';
  return { status: 'internal_error', reason: `${failure.message}${stopped ? '; the run was stopped' : ''}${where}` };
}
