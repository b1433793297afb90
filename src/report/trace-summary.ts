import type { ChalkInstance } from 'chalk';
import { isReplayModel } from '../ticket/model-id.js';
import { costUsd } from '../config/prices.js';
import { formatCount, formatDuration } from './summary.js';
import type { RunFold } from '../trace/fold.js';
import type { TokenUsage } from '../trace/records.js';
import { makeVisible as visible } from '../text/visible.js';
import { DEFAULT_WIDTH, outputTail } from './output-tail.js';

// `corral trace`: the run at a glance, from the fold of its trace (src/trace/fold.ts).
// This file only shapes the fold's facts for a person (and for --json): no event is read here.

export interface ToolStats {
  tool: string;
  calls: number;
  errors: number;
  totalMs: number;
}

export interface GuardedCall {
  step: number;
  tool: string;
  call: string;
  rule: string;
  scope: string;
  reason: string;
}

export interface AskedCall extends GuardedCall {
  /** approved or refused from the approval event; unanswered when the trace ends first. */
  answer: 'approved' | 'refused' | 'unanswered';
  by?: string;
}

export interface SlowCall {
  step: number;
  tool: string;
  call: string;
  durationMs: number;
}

/** Something that failed, with the output that says why (as the trace keeps it: redacted and capped). */
export interface Failure {
  kind: 'setup' | 'check' | 'tool';
  /** The setup command or check's name; a tool call's short rendering (`Bash(npm test)`). */
  name: string;
  /** The model turn, for a tool call. */
  step: number | null;
  /** `exit 1`, `timed out`, `denied by <rule>`, `error`. */
  how: string;
  /** Empty when the trace has none (a tool result of a corral that did not record it). */
  output: string;
}

export interface TraceSummary {
  runId: string | null;
  ticket: { id: string; title?: string } | null;
  model: string | null;
  /** The agent CLI that worked the ticket (docs/agents.md), absent for corral's own loop. */
  agent?: { kind: string; version: string };
  /** Whether the trace has its `end` event; a crash leaves it out. */
  finished: boolean;
  status: string | null;
  exitCode: number | null;
  reason: string | null;
  /** The step the trace reached (the last line's). */
  lastStep: number;
  /** Model turns answered. */
  steps: number;
  /** From the first line's time to the last's. */
  durationMs: number | null;
  toolCalls: number;
  tools: ToolStats[];
  denied: GuardedCall[];
  asked: AskedCall[];
  slowest: SlowCall[];
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  /** cache read / (input + cache read + cache write); null with no input at all. */
  cacheHitRatio: number | null;
  /** US dollars at built-in prices; 0 for replay; null when the model's price is unknown. */
  costUsd: number | null;
  /** The last round of checks. */
  checks: { round: number; results: { name: string; passed: boolean; exitCode: number | null; durationMs: number }[] } | null;
  fence: { ok: boolean; changes: number; violations: { path: string; reason: string }[] } | null;
  hostChanges: string[];
  /** Failed setup commands, failed checks of the last round, and tool calls that were denied or ended in an error, in that order. */
  failures: Failure[];
  /** How the conversation was kept within the context window; null when it never had to be. */
  context: RunFold['context'] | null;
  warnings: string[];
  /** Lines that could not be read (a half-written last line, damage). */
  skippedLines: number;
}

const SLOWEST = 5;

/** A turn's cost at the built-in list prices; a replay costs nothing. For folding a trace read back. */
export function listPrice(usage: TokenUsage, model: string): number | null {
  return isReplayModel(model) ? 0 : costUsd(model, usage);
}

/** How an ask ended, from the answer its call record holds, and who gave it. */
function askAnswer(answer: string | undefined): Pick<AskedCall, 'answer' | 'by'> {
  switch (answer) {
    case undefined:
      return { answer: 'unanswered' };
    case 'yes':
    case 'always':
      return { answer: 'approved', by: 'person' };
    case 'remembered':
      return { answer: 'approved', by: 'remembered' };
    case 'no':
      return { answer: 'refused', by: 'person' };
    default:
      return { answer: 'refused', by: answer };
  }
}

/** The summary of a trace from its fold; `skippedLines` are those the tolerant reader left out. */
export function summarizeTrace(fold: RunFold, skippedLines = 0): TraceSummary {
  const tools = new Map<string, ToolStats>();
  for (const call of fold.calls) {
    const stats = tools.get(call.tool) ?? { tool: call.tool, calls: 0, errors: 0, totalMs: 0 };
    stats.calls += 1;
    if (call.result?.isError) stats.errors += 1;
    stats.totalMs += call.result?.durationMs ?? 0;
    tools.set(call.tool, stats);
  }
  const slowest = fold.calls
    .flatMap((call) => (call.result ? [{ step: call.step, tool: call.tool, call: call.call, durationMs: call.result.durationMs }] : []))
    .sort((a, b) => b.durationMs - a.durationMs)
    .slice(0, SLOWEST);
  const u = fold.usage;
  const tokens = { input: u.inputTokens, output: u.outputTokens, cacheRead: u.cacheReadTokens, cacheWrite: u.cacheWriteTokens, total: u.inputTokens + u.outputTokens + u.cacheReadTokens + u.cacheWriteTokens };
  const prompt = tokens.input + tokens.cacheRead + tokens.cacheWrite;
  const guarded = (record: RunFold['denied'][number]): GuardedCall => ({ step: record.step, tool: record.tool, call: record.call, rule: record.rule, scope: record.scope ?? '', reason: record.reason });
  const violations = (fold.fence?.verdicts ?? []).filter((v) => !v.allowed).map((v) => ({ path: v.change.path, reason: v.reason ?? '' }));
  const skipped = skippedLines > 0 ? [`${skippedLines} unreadable line${skippedLines === 1 ? '' : 's'} skipped (a line cut short by a crash, or damage)`] : [];
  return {
    runId: fold.start?.runId ?? null,
    ticket: fold.start ? { id: fold.start.ticket.id, ...(fold.start.ticket.title ? { title: fold.start.ticket.title } : {}) } : null,
    model: fold.start?.model ?? null,
    ...(fold.agent ? { agent: { kind: fold.agent.kind, version: fold.agent.version } } : {}),
    finished: fold.end !== null,
    status: fold.end?.status ?? null,
    exitCode: fold.end?.exitCode ?? null,
    reason: fold.end?.reason || null,
    lastStep: fold.lastStep,
    steps: fold.steps,
    durationMs: fold.firstTime === null || fold.lastTime === null ? null : fold.lastTime - fold.firstTime,
    toolCalls: fold.toolCalls,
    tools: [...tools.values()].sort((a, b) => b.calls - a.calls || b.totalMs - a.totalMs || a.tool.localeCompare(b.tool)),
    denied: fold.denied.map(guarded),
    asked: fold.asked.map((record) => ({ ...guarded(record), ...askAnswer(record.answer) })),
    slowest,
    tokens,
    cacheHitRatio: prompt === 0 ? null : tokens.cacheRead / prompt,
    costUsd: fold.costUsd,
    checks: fold.checkRoundsUsed > 0 || fold.checks.length > 0 ? { round: fold.checkRoundsUsed, results: fold.checks.map((c) => ({ name: c.name, passed: c.passed, exitCode: c.exitCode, durationMs: c.durationMs })) } : null,
    fence: fold.fence ? { ok: fold.fence.ok, changes: fold.fence.verdicts.length, violations } : null,
    hostChanges: fold.hostChanges ?? [],
    failures: failuresOf(fold),
    context: fold.context.clears + fold.context.compactions > 0 ? { ...fold.context } : null,
    warnings: [...fold.warnings, ...skipped],
    skippedLines,
  };
}

function exitHow(exitCode: number | null, timedOut: boolean | undefined): string {
  return timedOut ? 'timed out' : exitCode === null ? 'killed by a signal' : `exit ${exitCode}`;
}

function failuresOf(fold: RunFold): Failure[] {
  const setup = fold.setup.filter((s) => s.timedOut || s.exitCode !== 0).map((s): Failure => ({ kind: 'setup', name: s.name, step: null, how: exitHow(s.exitCode, s.timedOut), output: s.output }));
  const checks = fold.checks.filter((c) => !c.passed).map((c): Failure => ({ kind: 'check', name: c.name, step: null, how: exitHow(c.exitCode, c.timedOut), output: c.output }));
  const tools = fold.calls
    .filter((call) => call.result?.isError)
    .map((call): Failure => {
      const denied = call.decision && call.decision.effect !== 'allow' && call.approval?.approved !== true;
      const how = denied ? `${call.decision!.effect === 'deny' ? 'denied' : 'refused'} by ${call.decision!.rule}` : 'error';
      return { kind: 'tool', name: call.call, step: call.step, how, output: call.result?.output ?? '' };
    });
  return [...setup, ...checks, ...tools];
}

const ANSWER: Record<AskedCall['answer'], string> = { approved: 'approved', refused: 'refused', unanswered: 'unanswered (the trace ends first)' };

/** The summary for people: a few lines, one section a fact; a failure's output is cut to `width` (the terminal's). */
export function formatTraceSummary(s: TraceSummary, c: ChalkInstance, width = DEFAULT_WIDTH): string {
  const lines: string[] = [];
  const label = (name: string) => c.dim(name.padEnd(9));
  const title = s.ticket?.title ? ` — ${visible(s.ticket.title)}` : '';
  lines.push(`${c.bold(visible(s.ticket?.id ?? '(no run_start)'))}${title}  ${c.dim(visible(s.runId ?? ''))}`);
  if (s.finished) {
    const paint = s.status === 'passed' ? c.green.bold : c.red.bold;
    lines.push(`  ${label('status')}${paint(visible(s.status ?? '?'))} ${c.dim(`(exit ${s.exitCode ?? '?'})`)}${s.reason ? `  ${visible(s.reason)}` : ''}`);
  } else {
    lines.push(`  ${label('status')}${c.yellow.bold(`unfinished: the trace ends at step ${s.lastStep}`)} ${c.dim('(no end event)')}`);
  }
  lines.push(`  ${label('model')}${visible(s.model ?? 'unknown')}${s.agent ? c.dim(` (through ${visible(s.agent.kind)} ${visible(s.agent.version)})`) : ''}`);
  const duration = s.durationMs === null ? '' : ` · ${formatDuration(s.durationMs)}`;
  lines.push(`  ${label('steps')}${s.steps} · ${s.toolCalls} tool calls · ${s.denied.length} denied · ${s.asked.length} asked${duration}`);
  const t = s.tokens;
  const ratio = s.cacheHitRatio === null ? 'n/a' : `${(s.cacheHitRatio * 100).toFixed(1)}%`;
  lines.push(`  ${label('tokens')}${formatCount(t.input)} in · ${formatCount(t.output)} out · ${formatCount(t.cacheRead)} cache read · ${formatCount(t.cacheWrite)} cache write · cache hit ${ratio}`);
  lines.push(`  ${label('cost')}${s.costUsd === null ? 'unknown' : `$${s.costUsd.toFixed(4)}`}`);
  if (s.context) {
    const x = s.context;
    const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;
    lines.push(`  ${label('context')}cleared ${x.clears}× (${plural(x.clearedResults, 'tool result')}) · compacted ${x.compactions}× (${plural(x.compactedTurns, 'turn')} into a summary)`);
  }

  if (s.tools.length > 0) {
    lines.push(`  ${c.dim('tools')}`);
    const width = Math.max(...s.tools.map((x) => x.tool.length));
    for (const x of s.tools) {
      const errors = x.errors > 0 ? c.dim(` (${x.errors} error${x.errors === 1 ? '' : 's'})`) : '';
      lines.push(`    ${visible(x.tool).padEnd(width)}  ${String(x.calls).padStart(3)} × · ${formatDuration(x.totalMs)}${errors}`);
    }
  }
  if (s.denied.length + s.asked.length > 0) lines.push(`  ${c.dim('denied and asked')}`);
  for (const d of s.denied) lines.push(`    ${c.yellow('✘')} ${visible(d.call)}  ${c.dim(`step ${d.step}, denied by ${visible(d.rule)}: ${visible(d.reason)}`)}`);
  for (const a of s.asked) {
    const mark = a.answer === 'approved' ? c.green('✔') : c.yellow('?');
    const by = a.by ? ` by ${visible(a.by)}` : '';
    lines.push(`    ${mark} ${visible(a.call)}  ${c.dim(`step ${a.step}, asked by ${visible(a.rule)}, ${ANSWER[a.answer]}${by}: ${visible(a.reason)}`)}`);
  }
  if (s.slowest.length > 0) {
    lines.push(`  ${c.dim('slowest')}`);
    for (const x of s.slowest) lines.push(`    ${formatDuration(x.durationMs).padStart(6)}  ${visible(x.call)}  ${c.dim(`step ${x.step}`)}`);
  }
  if (s.checks) {
    lines.push(`  ${label('checks')}${c.dim(`round ${s.checks.round}`)}`);
    for (const check of s.checks.results) {
      const how = check.passed ? '' : c.dim(` (exit ${check.exitCode ?? 'none'})`);
      lines.push(`    ${check.passed ? c.green('✔') : c.red('✘')} ${visible(check.name)}${how}  ${c.dim(formatDuration(check.durationMs))}`);
    }
  }
  if (s.fence) {
    const verdict = s.fence.ok ? c.green('ok') : c.red(`✘ ${s.fence.violations.length} outside the fence`);
    lines.push(`  ${label('fence')}${verdict} ${c.dim(`(${s.fence.changes} change${s.fence.changes === 1 ? '' : 's'})`)}`);
    for (const v of s.fence.violations) lines.push(`    ${c.red('✘')} ${visible(v.path)}  ${c.dim(visible(v.reason))}`);
  }
  if (s.hostChanges.length > 0) {
    const by = s.status === 'host_changed' ? ' (not by the agent, which could not reach it: concurrent activity)' : '';
    lines.push(`  ${label('host')}${c.red(`✘ the host repository changed during the run${by}`)}`);
    for (const change of s.hostChanges) lines.push(`    ${visible(change)}`);
  }
  if (s.failures.length > 0) lines.push(`  ${c.dim('failures')}`);
  for (const f of s.failures) {
    const where = f.step === null ? '' : `step ${f.step}, `;
    lines.push(`    ${c.red('✘')} ${f.kind === 'tool' ? '' : `${f.kind} `}${visible(f.name)}  ${c.dim(`${where}${visible(f.how)}`)}`);
    for (const line of outputTail(f.output, { width: width - 8 })) lines.push(`      ${c.dim('│')} ${line}`);
  }
  for (const warning of s.warnings) lines.push(`  ${c.yellow('warning')}  ${visible(warning)}`);
  return `${lines.join('\n')}\n`;
}
