import { describeCall } from '../text/describe-call.js';
import type { ChalkInstance } from 'chalk';
import { isReplayModel } from '../ticket/model-id.js';
import { costUsd } from '../config/prices.js';
import { formatCount, formatDuration } from './summary.js';
import type { TraceLine } from '../trace/read.js';
import { makeVisible as visible } from '../text/visible.js';

// `corral trace`: the run at a glance, computed from its trace alone. Pure: events in,
// data out; the formatter turns the data into lines a person reads. Every field is read
// defensively, as a trace may come from a crash, an older corral, or a hand edit.

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

export interface TraceSummary {
  runId: string | null;
  ticket: { id: string; title?: string } | null;
  model: string | null;
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
  warnings: string[];
  /** Lines that could not be read (a half-written last line, damage). */
  skippedLines: number;
}

const SLOWEST = 5;

const num = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) ? value : 0);
const str = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);

export function summarizeTrace(events: TraceLine[], skippedLines = 0): TraceSummary {
  const summary: TraceSummary = {
    runId: null,
    ticket: null,
    model: null,
    finished: false,
    status: null,
    exitCode: null,
    reason: null,
    lastStep: 0,
    steps: 0,
    durationMs: null,
    toolCalls: 0,
    tools: [],
    denied: [],
    asked: [],
    slowest: [],
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    cacheHitRatio: null,
    costUsd: null,
    checks: null,
    fence: null,
    hostChanges: [],
    warnings: [],
    skippedLines,
  };
  const tools = new Map<string, ToolStats>();
  const calls = new Map<string, { tool: string; call: string; step: number }>();
  const asks = new Map<string, AskedCall>();
  const durations: SlowCall[] = [];
  const checks: NonNullable<TraceSummary['checks']>['results'] = [];
  let checkRound = 0;
  let first: number | null = null;
  let last: number | null = null;

  for (const event of events) {
    const time = Date.parse(str(event.time));
    if (!Number.isNaN(time)) {
      first ??= time;
      last = time;
    }
    if (typeof event.step === 'number') summary.lastStep = Math.max(summary.lastStep, event.step);
    summary.runId ??= typeof event.run === 'string' ? event.run : null;
    const step = num(event.step);
    const id = str(event.id);
    switch (event.type) {
      case 'run_start': {
        const ticket = (event.ticket ?? {}) as Record<string, unknown>;
        summary.ticket = { id: str(ticket.id, str(event.ticket, '?')), ...(typeof ticket.title === 'string' ? { title: ticket.title } : {}) };
        summary.model = str(event.model) || null;
        if (typeof event.runId === 'string') summary.runId = event.runId;
        break;
      }
      case 'sandbox':
        if (typeof event.warning === 'string') summary.warnings.push(event.warning);
        break;
      case 'model_response': {
        summary.steps += 1;
        const usage = (event.usage ?? {}) as Record<string, unknown>;
        summary.tokens.input += num(usage.inputTokens);
        summary.tokens.output += num(usage.outputTokens);
        summary.tokens.cacheRead += num(usage.cacheReadTokens);
        summary.tokens.cacheWrite += num(usage.cacheWriteTokens);
        break;
      }
      case 'tool_call': {
        summary.toolCalls += 1;
        const tool = str(event.tool, '?');
        calls.set(id, { tool, call: describeCall(tool, event.input), step });
        const stats = tools.get(tool) ?? { tool, calls: 0, errors: 0, totalMs: 0 };
        stats.calls += 1;
        tools.set(tool, stats);
        break;
      }
      case 'tool_result': {
        const tool = str(event.tool, calls.get(id)?.tool ?? '?');
        const stats = tools.get(tool) ?? { tool, calls: 0, errors: 0, totalMs: 0 };
        stats.totalMs += num(event.durationMs);
        if (event.isError === true) stats.errors += 1;
        tools.set(tool, stats);
        durations.push({ step, tool, call: calls.get(id)?.call ?? `${tool}(…)`, durationMs: num(event.durationMs) });
        break;
      }
      case 'decision': {
        if (event.effect !== 'deny' && event.effect !== 'ask') break;
        const tool = str(event.tool, '?');
        const record: GuardedCall = { step, tool, call: calls.get(id)?.call ?? `${tool}(…)`, rule: str(event.rule, '?'), scope: str(event.scope), reason: str(event.reason) };
        if (event.effect === 'deny') summary.denied.push(record);
        else {
          const asked: AskedCall = { ...record, answer: 'unanswered' };
          summary.asked.push(asked);
          asks.set(id, asked);
        }
        break;
      }
      case 'approval': {
        const asked = asks.get(id);
        if (asked) {
          asked.answer = event.approved === true ? 'approved' : 'refused';
          if (typeof event.by === 'string') asked.by = event.by;
        }
        break;
      }
      case 'check': {
        const round = num(event.round);
        if (round !== checkRound) {
          checkRound = round;
          checks.length = 0;
        }
        checks.push({ name: str(event.name, '?'), passed: event.passed === true, exitCode: typeof event.exitCode === 'number' ? event.exitCode : null, durationMs: num(event.durationMs) });
        break;
      }
      case 'fence': {
        const verdicts = Array.isArray(event.verdicts) ? (event.verdicts as Record<string, unknown>[]) : [];
        const violations = verdicts
          .filter((v) => v.allowed !== true)
          .map((v) => ({ path: str(((v.change ?? {}) as Record<string, unknown>).path, '?'), reason: str(v.reason) }));
        summary.fence = { ok: event.ok === true, changes: verdicts.length, violations };
        break;
      }
      case 'host':
        summary.hostChanges = Array.isArray(event.differences) ? event.differences.map((d) => String(d)) : [];
        break;
      case 'end':
        summary.finished = true;
        summary.status = str(event.status) || null;
        summary.exitCode = typeof event.exitCode === 'number' ? event.exitCode : null;
        summary.reason = str(event.reason) || null;
        break;
    }
  }

  summary.tools = [...tools.values()].sort((a, b) => b.calls - a.calls || b.totalMs - a.totalMs || a.tool.localeCompare(b.tool));
  summary.slowest = durations.sort((a, b) => b.durationMs - a.durationMs).slice(0, SLOWEST);
  const t = summary.tokens;
  t.total = t.input + t.output + t.cacheRead + t.cacheWrite;
  const prompt = t.input + t.cacheRead + t.cacheWrite;
  summary.cacheHitRatio = prompt === 0 ? null : t.cacheRead / prompt;
  summary.costUsd = summary.model === null ? null : isReplayModel(summary.model) ? 0 : costUsd(summary.model, { inputTokens: t.input, outputTokens: t.output, cacheReadTokens: t.cacheRead, cacheWriteTokens: t.cacheWrite });
  if (checkRound > 0 || checks.length > 0) summary.checks = { round: checkRound, results: [...checks] };
  if (first !== null && last !== null) summary.durationMs = last - first;
  if (skippedLines > 0) summary.warnings.push(`${skippedLines} unreadable line${skippedLines === 1 ? '' : 's'} skipped (a line cut short by a crash, or damage)`);
  return summary;
}

const ANSWER: Record<AskedCall['answer'], string> = { approved: 'approved', refused: 'refused', unanswered: 'unanswered (the trace ends first)' };

/** The summary for people: a few lines, one section a fact. */
export function formatTraceSummary(s: TraceSummary, c: ChalkInstance): string {
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
  lines.push(`  ${label('model')}${visible(s.model ?? 'unknown')}`);
  const duration = s.durationMs === null ? '' : ` · ${formatDuration(s.durationMs)}`;
  lines.push(`  ${label('steps')}${s.steps} · ${s.toolCalls} tool calls · ${s.denied.length} denied · ${s.asked.length} asked${duration}`);
  const t = s.tokens;
  const ratio = s.cacheHitRatio === null ? 'n/a' : `${(s.cacheHitRatio * 100).toFixed(1)}%`;
  lines.push(`  ${label('tokens')}${formatCount(t.input)} in · ${formatCount(t.output)} out · ${formatCount(t.cacheRead)} cache read · ${formatCount(t.cacheWrite)} cache write · cache hit ${ratio}`);
  lines.push(`  ${label('cost')}${s.costUsd === null ? 'unknown' : `$${s.costUsd.toFixed(4)}`}`);

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
    lines.push(`  ${label('host')}${c.red('✘ the host repository changed during the run')}`);
    for (const change of s.hostChanges) lines.push(`    ${visible(change)}`);
  }
  for (const warning of s.warnings) lines.push(`  ${c.yellow('warning')}  ${visible(warning)}`);
  return `${lines.join('\n')}\n`;
}
