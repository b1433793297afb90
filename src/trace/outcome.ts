import { EXIT } from '../errors.js';
import type { BudgetKind, FenceVerdict } from './records.js';

// How a run ended, and the one place its status and exit code are chosen from that.

/** How a run ended before its result was judged against the fence. */
export type Outcome =
  | { kind: 'finished'; finalText: string }
  | { kind: 'checks_failed'; finalText: string; rounds: number }
  | { kind: 'budget_exhausted'; exceeded: { which: BudgetKind; detail: string }; finalText: string }
  | { kind: 'refused'; finalText: string }
  | { kind: 'blocked'; reason: string; finalText: string }
  | { kind: 'model_error'; message: string; finalText: string }
  | { kind: 'interrupted'; finalText: string }
  | { kind: 'setup_failed'; reason: string }
  | { kind: 'internal_error'; reason: string }
  | { kind: 'not_started'; reason: string }
  | undefined;

/** How a run can end; the `end` event's status is one of these. */
export const RUN_STATUSES = ['passed', 'failed', 'fence_violated', 'budget_exhausted', 'blocked', 'refused', 'model_error', 'interrupted', 'internal_error', 'host_changed'] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];

export function exitCodeOf(status: RunStatus): number {
  switch (status) {
    case 'passed':
      return EXIT.passed;
    case 'failed':
      return EXIT.failed;
    case 'fence_violated':
      return EXIT.fence_violated;
    case 'budget_exhausted':
      return EXIT.budget_exhausted;
    case 'blocked':
      return EXIT.blocked;
    case 'refused':
      return EXIT.refused;
    case 'model_error':
      return EXIT.model_error;
    case 'interrupted':
      return EXIT.interrupted;
    case 'internal_error':
      return EXIT.internal;
    case 'host_changed':
      return EXIT.host_changed;
  }
}

// Most severe first: what a batch of runs exits with. Interruption and broken input or
// internals come before outcomes; among outcomes a breached fence is the worst news.
const SEVERITY = [
  EXIT.interrupted,
  EXIT.internal,
  EXIT.usage,
  EXIT.fence_violated,
  EXIT.host_changed,
  EXIT.model_error,
  EXIT.refused,
  EXIT.blocked,
  EXIT.budget_exhausted,
  EXIT.failed,
  EXIT.passed,
] as const;

/** Position in SEVERITY; a code not in it ranks with internal error, as it means something broke. */
function severityRank(code: number): number {
  const i = (SEVERITY as readonly number[]).indexOf(code);
  return i === -1 ? 1 : i;
}

export function mostSevereExitCode(codes: number[]): number {
  let best = EXIT.passed as number;
  for (const code of codes) if (severityRank(code) < severityRank(best)) best = code;
  return best;
}

/**
 * Whether the agent could have changed the host repository: without a working sandbox its
 * commands can write the host's `.git` and checkout; with one they see neither (and
 * corral's own file tools are held to the worktree by the guard).
 */
export interface HostReach {
  /** The agent's commands ran in a sandbox that hides the host's `.git` and checkout. */
  hostSealed: boolean;
}

/**
 * The run's status: a breached fence beats every outcome but an interruption or a bug. A
 * host repository that changed during the run is a breach when the agent could have
 * changed it; when it could not (`hostSealed`), it was someone else's concurrent activity
 * (a fetch, a commit, a checkout in the host), which is `host_changed`: the agent's work
 * is not judged on it, nor committed.
 */
export function decideStatus(outcome: Outcome, fence: { ok: boolean; verdicts: FenceVerdict[] }, ticket: { allowEmpty: boolean }, hostChanges: string[] = [], reach: HostReach = { hostSealed: false }): { status: RunStatus; reason: string } {
  if (!outcome) return { status: 'internal_error', reason: 'the run ended before the agent started' };
  if (outcome.kind === 'interrupted') return { status: 'interrupted', reason: 'interrupted' };
  if (outcome.kind === 'internal_error') return { status: 'internal_error', reason: outcome.reason };
  if (hostChanges.length > 0 && !reach.hostSealed) {
    return {
      status: 'fence_violated',
      reason: `the host repository changed during the run: ${hostChanges.join('; ')} (the agent ran without a sandbox, so it could have done this; if it was your own git activity in the host, such as a fetch, a commit or a checkout, run again when the host is quiet)`,
    };
  }
  if (!fence.ok) {
    const bad = fence.verdicts.filter((v) => !v.allowed).map((v) => v.change.path);
    return { status: 'fence_violated', reason: `changed ${bad.length} path(s) outside the fence: ${bad.join(', ')}` };
  }
  if (hostChanges.length > 0) {
    return {
      status: 'host_changed',
      reason: `the host repository changed during the run, which the sandboxed agent could not have done (the host's .git and checkout were out of its reach): concurrent activity, such as a fetch, a commit or a checkout in the host: ${hostChanges.join('; ')}; the result was not committed, the patch is kept`,
    };
  }
  switch (outcome.kind) {
    case 'setup_failed':
      return { status: 'failed', reason: outcome.reason };
    case 'not_started':
      return { status: 'blocked', reason: outcome.reason };
    case 'budget_exhausted':
      return { status: 'budget_exhausted', reason: `budget exhausted: ${outcome.exceeded.which} (${outcome.exceeded.detail})` };
    case 'refused':
      return { status: 'refused', reason: 'the model refused the task' };
    case 'blocked':
      return { status: 'blocked', reason: `blocked by policy: ${outcome.reason}` };
    case 'model_error':
      return { status: 'model_error', reason: `model API failed: ${outcome.message}` };
    case 'checks_failed':
      return { status: 'failed', reason: `checks still failing after ${outcome.rounds} runs (${outcome.rounds - 1} sent back to the agent)` };
    case 'finished':
      if (fence.verdicts.length === 0 && !ticket.allowEmpty) {
        return { status: 'failed', reason: 'the agent changed nothing (set allow_empty: true if that can be a pass)' };
      }
      return { status: 'passed', reason: 'checks passed and the fence held' };
  }
}
