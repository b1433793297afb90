import type { BudgetKind } from '../trace/records.js';
import type { RunResult } from '../trace/result.js';
import { redactValue, type Redactor } from '../text/redact.js';

export const REPORT_VERSION = 1;

/** A ticket as a report line names it: a missing title is null. */
export interface TicketRef {
  id: string;
  file: string;
  title: string | null;
}

// Facts a run may not have. In a RunResult they are left out; in a report line they are
// always there, as null or [], so every documented field can be read without a guard.
type MaybeAbsent = 'ticket' | 'budgetExhausted' | 'baseCommit' | 'hostUncommitted' | 'hostChanges' | 'approvalsNeeded' | 'patch' | 'branch' | 'sandbox' | 'worktree' | 'instructions';

/** The machine-readable report of one run: the summary's facts, secrets redacted (schema/report.schema.json). */
export type JsonRunReport = { corral: typeof REPORT_VERSION; type: 'run' } & Omit<RunResult, MaybeAbsent> & {
    ticket: TicketRef;
    budgetExhausted: BudgetKind | null;
    baseCommit: string | null;
    hostUncommitted: NonNullable<RunResult['hostUncommitted']> | null;
    hostChanges: string[];
    approvalsNeeded: string | null;
    patch: string | null;
    branch: string | null;
    sandbox: 'bwrap' | 'none' | null;
    worktree: string | null;
    instructions: string[];
  };

export function ticketRef(ticket: { id: string; file: string; title?: string | null | undefined }): TicketRef {
  return { id: ticket.id, file: ticket.file, title: ticket.title || null };
}

export function toJsonReport(result: RunResult, redact?: Redactor): JsonRunReport {
  const report: JsonRunReport = {
    corral: REPORT_VERSION,
    type: 'run',
    runId: result.runId,
    ticket: ticketRef(result.ticket),
    status: result.status,
    exitCode: result.exitCode,
    reason: result.reason,
    budgetExhausted: result.budgetExhausted ?? null,
    model: result.model,
    steps: result.steps,
    usage: result.usage,
    costUsd: result.costUsd,
    durationMs: result.durationMs,
    baseCommit: result.baseCommit ?? null,
    hostUncommitted: result.hostUncommitted ?? null,
    changes: result.changes,
    hostChanges: result.hostChanges ?? [],
    setup: result.setup,
    checks: result.checks,
    checkRoundsUsed: result.checkRoundsUsed,
    toolCalls: result.toolCalls,
    denied: result.denied,
    asked: result.asked,
    approvalsNeeded: result.approvalsNeeded ?? null,
    followUps: result.followUps,
    finalText: result.finalText,
    runDir: result.runDir,
    patch: result.patch ?? null,
    trace: result.trace,
    branch: result.branch ?? null,
    sandbox: result.sandbox ?? null,
    worktree: result.worktree ?? null,
    instructions: result.instructions ?? [],
    warnings: result.warnings,
  };
  return redactValue(report, redact);
}

const ABSENT_AS: Record<Exclude<MaybeAbsent, 'ticket'>, null | []> = {
  budgetExhausted: null,
  baseCommit: null,
  hostUncommitted: null,
  hostChanges: [],
  approvalsNeeded: null,
  patch: null,
  branch: null,
  sandbox: null,
  worktree: null,
  instructions: [],
};

/**
 * A run line read back (`corral report merge`) with every field present: a line from a
 * corral that left empty facts out gets them as null or [], fields it has stay as they are.
 */
export function completeRunLine<T extends { ticket: { id: string; file: string; title?: string | null } }>(line: T): T & Pick<JsonRunReport, MaybeAbsent> {
  const filled: Record<string, unknown> = { ...line };
  for (const [key, empty] of Object.entries(ABSENT_AS)) if (filled[key] === undefined) filled[key] = Array.isArray(empty) ? [] : empty;
  // Lines of a corral that did not report setup yet.
  filled.setup ??= [];
  return { ...(filled as T), ...(filled as Pick<JsonRunReport, Exclude<MaybeAbsent, 'ticket'>>), ticket: ticketRef(line.ticket) };
}
