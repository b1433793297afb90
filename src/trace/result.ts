import type { BudgetKind } from './records.js';
import type { TokenUsage } from './records.js';
import { EXIT } from '../errors.js';
import type { RunStatus } from './outcome.js';
import type { Effect } from './records.js';
import type { FenceVerdict } from './records.js';

export interface CheckResult {
  name: string;
  command: string;
  passed: boolean;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  output: string;
}

/** A setup command as it ran: it failed when it timed out or exited other than 0. */
export interface SetupResult {
  name: string;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  output: string;
}

export interface CallRecord {
  step: number;
  tool: string;
  effect: Effect;
  rule: string;
  /** Where the deciding rule lives: baseline, user, project, ticket, default, or hook. */
  scope?: string;
  reason: string;
  /** The file (and line) the deciding rule was written in, when it has one. */
  source?: string;
  /** For an ask: yes (once), always (for the run), remembered (an earlier always), no, unattended (refused, nobody to ask) or interrupted. */
  answer?: 'yes' | 'always' | 'remembered' | 'no' | 'unattended' | 'interrupted';
  /** A short rendering of the call for the summary. */
  call: string;
}

export interface RunResult {
  runId: string;
  ticket: { id: string; file: string; title?: string };
  status: RunStatus;
  exitCode: number;
  /** One line saying why the run ended as it did. */
  reason: string;
  /** Which budget ran out, when status is budget_exhausted. */
  budgetExhausted?: BudgetKind;
  model: string;
  steps: number;
  usage: TokenUsage;
  costUsd: number | null;
  durationMs: number;
  baseCommit?: string;
  /** What the host checkout held beyond its HEAD as the run began (modified, staged, untracked), and whether the run started from it. */
  hostUncommitted?: { modified: number; staged: number; untracked: number; inRun: boolean };
  changes: FenceVerdict[];
  /** How the host repository changed during the run (HEAD, refs, config, hooks, index); absent when it did not. */
  hostChanges?: string[];
  /** The setup commands that ran, in order; a failed one is the last. */
  setup: SetupResult[];
  checks: CheckResult[];
  checkRoundsUsed: number;
  toolCalls: number;
  denied: CallRecord[];
  /** Every call the guard asked about, approved or refused. */
  asked: CallRecord[];
  /** Refused asks written as ready-to-paste allow rules (unattended runs only). */
  approvalsNeeded?: string;
  followUps: string[];
  finalText: string;
  runDir: string;
  patch?: string;
  trace: string;
  branch?: string;
  /** What commands ran in: bubblewrap, or nothing (`none`, or `auto` without a working bubblewrap). */
  sandbox?: 'bwrap' | 'none';
  /** Where the worktree was kept (--keep). */
  worktree?: string;
  /** The AGENTS.md and CLAUDE.md files the system prompt carried (`path (cut)` when only its start fitted); absent in older traces. */
  instructions?: string[];
  warnings: string[];
}

/** The agent's `QUEUE:` lines: problems it noticed outside the task. */
export function extractFollowUps(finalText: string): string[] {
  return finalText
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.startsWith('QUEUE:'))
    .map((line) => line.slice('QUEUE:'.length).trim())
    .filter((line) => line.length > 0);
}

/**
 * The result of a ticket whose run threw instead of returning one (a bug, or the machine
 * failing under it): reported like any other ticket, so a batch still ends with its table,
 * totals and JUnit file.
 */
export function internalErrorResult(ticket: { id: string; file: string; title?: string }, model: string, error: unknown, durationMs: number): RunResult {
  return {
    runId: '',
    ticket: { id: ticket.id, file: ticket.file, ...(ticket.title ? { title: ticket.title } : {}) },
    status: 'internal_error',
    exitCode: EXIT.internal,
    reason: `internal error: ${error instanceof Error ? error.message : String(error)}`,
    model,
    steps: 0,
    usage: { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    costUsd: null,
    durationMs,
    changes: [],
    setup: [],
    checks: [],
    checkRoundsUsed: 0,
    toolCalls: 0,
    denied: [],
    asked: [],
    followUps: [],
    finalText: '',
    runDir: '',
    trace: '',
    warnings: [],
  };
}
