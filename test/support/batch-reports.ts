import { totalsOf, type BatchReport, type JsonSkippedReport, type TicketReport } from '../../src/report/batch-report.js';
import { REPORT_VERSION, ticketRef, type JsonRunReport } from '../../src/report/json.js';
import type { CheckResult, RunResult } from '../../src/trace/result.js';

// Report lines as `corral run --json` writes them, for the reporters' unit tests.

/** A passed run of a ticket in the repository at `root`, with `overrides` on top. */
export function sampleRun(overrides: Partial<Omit<JsonRunReport, 'ticket'>> & { ticket: { id: string; file: string; title?: string } }, root = '/repo'): JsonRunReport {
  const runDir = `${root}/.corral/runs/run-${overrides.ticket.id}`;
  return {
    corral: REPORT_VERSION,
    type: 'run',
    runId: `run-${overrides.ticket.id}`,
    status: 'passed',
    exitCode: 0,
    reason: 'all checks passed',
    model: 'claude-sonnet-4-5',
    steps: 4,
    usage: { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 300, cacheWriteTokens: 0 },
    budgetExhausted: null,
    costUsd: 0.0123,
    durationMs: 12_345,
    baseCommit: 'abc123',
    hostUncommitted: null,
    changes: [{ change: { kind: 'modified', path: 'src/a.ts' }, allowed: true }],
    hostChanges: [],
    setup: [],
    checks: [sampleCheck({ name: 'test' })],
    checkRoundsUsed: 1,
    toolCalls: 6,
    denied: [],
    asked: [],
    approvalsNeeded: null,
    followUps: [],
    finalText: 'done',
    runDir,
    patch: `${runDir}/changes.patch`,
    trace: `${runDir}/trace.jsonl`,
    branch: null,
    sandbox: 'bwrap',
    worktree: null,
    instructions: [],
    warnings: [],
    ...overrides,
    ticket: ticketRef(overrides.ticket),
  };
}

export function sampleCheck(overrides: Partial<CheckResult> & { name: string }): CheckResult {
  return { command: `npm run ${overrides.name}`, passed: true, exitCode: 0, timedOut: false, durationMs: 800, output: '', ...overrides };
}

export function sampleSkipped(id: string, cause: JsonSkippedReport['cause'], reason: string, root = '/repo'): JsonSkippedReport {
  return { corral: REPORT_VERSION, type: 'skipped', ticket: { id, file: `${root}/tickets/${id}.md`, title: null }, status: 'skipped', cause, reason, exitCode: cause === 'max_usd' ? 3 : null };
}

export function sampleBatch(tickets: TicketReport[]): BatchReport {
  return { tickets, totals: totalsOf(tickets, 61_500, [{ index: 1, count: 1 }]) };
}

/** The RunResult a report line was made from: its nulls and empty host changes left out again. */
export function sampleResult(report: JsonRunReport): RunResult {
  const { corral: _corral, type: _type, ticket, budgetExhausted, baseCommit, hostUncommitted, hostChanges, approvalsNeeded, patch, branch, sandbox, worktree, ...rest } = report;
  return {
    ...rest,
    ticket: { id: ticket.id, file: ticket.file, ...(ticket.title === null ? {} : { title: ticket.title }) },
    ...(budgetExhausted === null ? {} : { budgetExhausted }),
    ...(baseCommit === null ? {} : { baseCommit }),
    ...(hostUncommitted === null ? {} : { hostUncommitted }),
    ...(hostChanges.length === 0 ? {} : { hostChanges }),
    ...(approvalsNeeded === null ? {} : { approvalsNeeded }),
    ...(patch === null ? {} : { patch }),
    ...(branch === null ? {} : { branch }),
    ...(sandbox === null ? {} : { sandbox }),
    ...(worktree === null ? {} : { worktree }),
  };
}
