import path from 'node:path';
import type { ChalkInstance } from 'chalk';
import { totalTokens } from '../trace/records.js';
import { isReplayModel, replayModelId, replayScriptPath } from '../ticket/model-id.js';
import type { RunResult } from '../trace/result.js';
import type { RunStatus } from '../trace/outcome.js';
import type { ChangeKind } from '../trace/records.js';
import { makeVisible as visible } from '../text/visible.js';
import type { Redactor } from '../text/redact.js';
import { DEFAULT_WIDTH, outputTail } from './output-tail.js';

export const STATUS_LABEL: Record<RunStatus, string> = {
  passed: 'PASSED',
  failed: 'FAILED',
  fence_violated: 'FENCE VIOLATED',
  host_changed: 'HOST CHANGED',
  budget_exhausted: 'BUDGET EXHAUSTED',
  blocked: 'BLOCKED',
  refused: 'REFUSED',
  model_error: 'MODEL ERROR',
  interrupted: 'INTERRUPTED',
  internal_error: 'INTERNAL ERROR',
};

const APPROVED = new Set(['yes', 'always', 'remembered']);
const ANSWER_TEXT: Record<string, string> = {
  yes: 'approved once',
  always: 'approved for this run',
  remembered: 'approved (an earlier "always")',
  no: 'refused by you',
  unattended: 'refused (unattended: nobody to approve)',
  interrupted: 'refused (the run was interrupted)',
};

const KIND_LETTER: Record<ChangeKind, string> = { added: 'A', modified: 'M', deleted: 'D', renamed: 'R', mode: 'm', type: 'T' };

/**
 * A whole number with commas between thousands (12,345). Not toLocaleString: its first
 * call loads the ICU locale data, which every run's summary would wait for.
 */
export function formatCount(n: number): string {
  const digits = String(Math.round(Math.abs(n)));
  return `${n < 0 ? '-' : ''}${digits.replace(/\B(?=(\d{3})+$)/g, ',')}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  return `${Math.floor(ms / 60_000)}m${Math.round((ms % 60_000) / 1000)}s`;
}

// A run's facts as a RunResult leaves them out and as a report line gives them: null.
type MaybeNull = 'ticket' | 'budgetExhausted' | 'baseCommit' | 'hostUncommitted' | 'hostChanges' | 'approvalsNeeded' | 'patch' | 'branch' | 'sandbox' | 'worktree' | 'instructions';
/** A RunResult or a report line (JsonRunReport): the summary reads both. */
export type SummaryInput = Omit<RunResult, MaybeNull> & { ticket: { id: string; file: string; title?: string | null | undefined } } & {
  [K in Exclude<MaybeNull, 'ticket'>]?: RunResult[K] | null;
};

export interface SummaryOptions {
  /** The terminal's width: a failed command's output lines are cut to it (default 120). */
  width?: number;
  /** The run's secret redaction, applied to a command's output before it is cut (so no part of a secret is left). */
  redact?: Redactor;
}

/** The end-of-run summary a person reads in five seconds. Pure: paths shown relative to `cwd`. */
export function formatSummary(result: SummaryInput, c: ChalkInstance, cwd: string, options: SummaryOptions = {}): string {
  const redact = options.redact ?? ((text: string) => text);
  // Indented under its command: the tail of a failed command's output, the cause in view.
  const tailOf = (output: string): string[] => outputTail(redact(output), { width: (options.width ?? DEFAULT_WIDTH) - 8 }).map((line) => `      ${c.dim('│')} ${line}`);
  const rel = (p: string) => path.relative(cwd, p) || '.';
  const ok = result.status === 'passed';
  const paint = ok ? c.green.bold : c.red.bold;
  const lines: string[] = [];
  const title = result.ticket.title ? ` — ${result.ticket.title}` : '';
  lines.push(`${paint(`${ok ? '✔' : '✘'} ${STATUS_LABEL[result.status]}`)}  ${c.bold(result.ticket.id)}${title}  ${c.dim(`(exit ${result.exitCode})`)}`);
  lines.push(`  ${c.dim('why')}      ${visible(result.reason)}`);

  const tokens = totalTokens(result.usage);
  const cached = result.usage.cacheReadTokens;
  const cache = tokens > 0 && cached > 0 ? ` (${Math.round((cached / tokens) * 100)}% cached)` : '';
  const cost = result.costUsd === null ? 'cost unknown' : `$${result.costUsd.toFixed(4)}`;
  lines.push(`  ${c.dim('spent')}    ${result.steps} steps · ${formatCount(tokens)} tokens${cache} · ${cost} · ${formatDuration(result.durationMs)} · ${isReplayModel(result.model) ? replayModelId(rel(replayScriptPath(result.model))) : result.model}`);
  // Which of the repository's AGENTS.md and CLAUDE.md the model was given.
  if (result.instructions && result.instructions.length > 0) lines.push(`  ${c.dim('read')}     ${result.instructions.map(visible).join(', ')}`);

  if (result.changes.length === 0) lines.push(`  ${c.dim('changes')}  none`);
  else {
    lines.push(`  ${c.dim('changes')}`);
    const width = Math.min(60, Math.max(...result.changes.map((v) => v.change.path.length + (v.change.from ? v.change.from.length + 4 : 0))));
    for (const v of result.changes) {
      const name = visible(v.change.from ? `${v.change.from} → ${v.change.path}` : v.change.path);
      const verdict = v.allowed ? c.green('allowed') : c.red(`✘ ${v.reason}`);
      lines.push(`    ${KIND_LETTER[v.change.kind]}  ${name.padEnd(width)}  ${verdict}`);
    }
  }

  const uncommitted = result.hostUncommitted;
  if (uncommitted && uncommitted.modified + uncommitted.staged + uncommitted.untracked > 0) {
    const counts = (['modified', 'staged', 'untracked'] as const).filter((kind) => uncommitted[kind] > 0).map((kind) => `${uncommitted[kind]} ${kind}`).join(', ');
    lines.push(`  ${c.dim('host')}     ${uncommitted.inRun ? `started from your working tree (--from-worktree): ${counts}` : c.yellow(`not part of this run: ${counts} (it started from the commit; --from-worktree starts from your working tree)`)}`);
  }
  if (result.hostChanges && result.hostChanges.length > 0) {
    const by = result.status === 'host_changed' ? ' (not by the agent, which could not reach it: concurrent activity)' : '';
    lines.push(`  ${c.dim('host')}     ${c.red(`✘ the host repository changed during the run${by}`)}`);
    for (const change of result.hostChanges) lines.push(`    ${visible(change)}`);
  }

  const failedSetup = (result.setup ?? []).find((setup) => setup.timedOut || setup.exitCode !== 0);
  if (failedSetup) {
    const how = failedSetup.timedOut ? 'timed out' : failedSetup.exitCode === null ? 'killed by a signal' : `exit ${failedSetup.exitCode}`;
    lines.push(`  ${c.dim('setup')}    ${c.red('✘')} ${visible(failedSetup.name)} ${how}  ${c.dim(formatDuration(failedSetup.durationMs))}`);
    lines.push(...tailOf(failedSetup.output));
  }

  if (result.checks.length > 0) {
    lines.push(`  ${c.dim('checks')}   ${c.dim(`round ${result.checkRoundsUsed}`)}`);
    for (const check of result.checks) {
      const mark = check.passed ? c.green('✔') : c.red('✘');
      const how = check.passed ? '' : check.timedOut ? ' timed out' : ` exit ${check.exitCode}`;
      lines.push(`    ${mark} ${check.name}${how}  ${c.dim(formatDuration(check.durationMs))}`);
      if (!check.passed) lines.push(...tailOf(check.output));
    }
  }

  const approved = result.asked.filter((record) => APPROVED.has(record.answer ?? 'no')).length;
  const asked = result.asked.length === 0 ? '0 asked' : `${result.asked.length} asked (${approved} approved, ${result.asked.length - approved} refused)`;
  lines.push(`  ${c.dim('calls')}    ${result.toolCalls} tool calls · ${result.denied.length} denied · ${asked}`);
  for (const record of result.denied) {
    lines.push(`    ${c.yellow('✘')} ${visible(record.call)}  ${c.dim(`denied by ${visible(record.rule)}: ${visible(record.reason)}`)}`);
  }
  for (const record of result.asked) {
    const yes = APPROVED.has(record.answer ?? 'no');
    lines.push(`    ${yes ? c.green('✔') : c.yellow('?')} ${visible(record.call)}  ${c.dim(`asked by ${visible(record.rule)}, ${ANSWER_TEXT[record.answer ?? 'no']}: ${visible(record.reason)}`)}`);
  }
  if (result.approvalsNeeded) lines.push(`  ${c.dim('approve')}  ${rel(result.approvalsNeeded)} ${c.dim('(refused asks as ready-to-paste allow rules)')}`);
  if (result.followUps.length > 0) {
    lines.push(`  ${c.dim('follow-ups')}`);
    for (const item of result.followUps) lines.push(`    • ${visible(item)}`);
  }
  for (const warning of result.warnings) lines.push(`  ${c.yellow('warning')}  ${visible(warning)}`);
  if (result.patch) lines.push(`  ${c.dim('patch')}    ${rel(result.patch)}`);
  if (result.branch) lines.push(`  ${c.dim('branch')}   ${result.branch}`);
  if (result.worktree) lines.push(`  ${c.dim('worktree')} ${result.worktree} (kept)`);
  if (result.trace) lines.push(`  ${c.dim('trace')}    ${rel(result.trace)}`);
  return `${lines.join('\n')}\n`;
}
