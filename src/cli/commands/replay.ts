import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { readTrace } from '../../trace/read.js';
import type { EventOf, TraceLine } from '../../trace/events.js';
import { EXIT, UsageError } from '../../errors.js';
import { dryRunGuard } from '../../run/dry-run.js';
import type { Guard } from '../../guard/guard.js';
import { replayDecisions, type DecisionChange, type DecisionReplay } from '../../run/replay-decisions.js';
import { loadTicket } from '../../ticket/load.js';
import { findRepoRoot } from '../../git/git.js';
import type { CliIo } from '../io.js';

const TRACE_FILE = 'trace.jsonl';

export interface ReplayOptions {
  json?: boolean;
}

interface TraceReport extends DecisionReplay {
  trace: string;
  ticket: string | null;
  /** Why the trace was judged without its ticket, when it was. */
  note?: string;
  truncated: boolean;
}

/**
 * `corral replay <trace|run-dir|folder>...`: every recorded tool call through today's
 * guard and config as a dry run; lists the calls whose decision would differ. Exit 1
 * when an effect would.
 */
export async function replayCommand(targets: string[], options: ReplayOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const shown = (file: string): string => path.relative(cwd, file) || file;
  const traces = await findTraces(targets, cwd);
  const guards = new Map<string, { guard: Guard; root: string }>();
  const reports: TraceReport[] = [];
  for (const trace of traces) {
    // Strict: a decision lost to a damaged line would hide a change.
    const { events, cut } = await readTrace(trace, { mode: 'strict', shownAs: shown(trace) });
    const judge = await judgeFor(events, trace, { cwd, env: io.env, guards, shown });
    const worktree = first(events, 'worktree')?.dir;
    const rebase = worktree !== undefined ? { from: worktree, to: judge.root } : undefined;
    const replay = await replayDecisions(events, judge.guard, rebase);
    reports.push({ trace: shown(trace), ticket: judge.ticket, ...(judge.note ? { note: judge.note } : {}), truncated: cut, ...replay });
  }
  const totals = {
    traces: reports.length,
    calls: sum(reports, (r) => r.calls),
    changed: sum(reports, (r) => r.changed.length),
    otherRule: sum(reports, (r) => r.otherRule.length),
  };
  if (options.json) io.stdout.write(`${JSON.stringify({ traces: reports, totals })}\n`);
  else io.stdout.write(formatReports(reports, totals));
  return totals.changed > 0 ? EXIT.failed : EXIT.passed;
}

/** Trace files named, in run directories named, or anywhere below folders named; sorted, each once. */
async function findTraces(targets: string[], cwd: string): Promise<string[]> {
  const found = new Set<string>();
  for (const target of targets) {
    const absolute = path.resolve(cwd, target);
    const info = await stat(absolute).catch(() => undefined);
    if (info === undefined) throw new UsageError(`${target}: no such trace, run directory or folder`);
    if (info.isFile()) {
      found.add(absolute);
      continue;
    }
    const below = await tracesBelow(absolute);
    if (below.length === 0) throw new UsageError(`${target}: no ${TRACE_FILE} in this folder or below it`);
    for (const file of below) found.add(file);
  }
  return [...found].sort();
}

async function tracesBelow(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile() && e.name === TRACE_FILE).map((e) => path.join(e.parentPath, e.name)).filter((file) => !file.split(path.sep).includes('.git'));
}

interface Judge {
  guard: Guard;
  /** Where the recorded worktree's paths are judged now: the ticket's repository. */
  root: string;
  ticket: string | null;
  note?: string;
}

/**
 * Today's guard for a recorded run: its ticket (as named in `run_start`) with the user and
 * project config, like `corral explain --ticket`. A ticket that is gone leaves the config
 * of the trace's repository, with a fence that allows every path.
 */
async function judgeFor(events: TraceLine[], trace: string, context: { cwd: string; env: NodeJS.ProcessEnv; guards: Map<string, { guard: Guard; root: string }>; shown: (f: string) => string }): Promise<Judge> {
  const start = first(events, 'run_start');
  // Judged for the sandbox the run had: what bubblewrap contained then is not a change now.
  const sandbox = first(events, 'sandbox')?.kind ?? 'none';
  const ticketFile = start?.ticket.file || undefined;
  if (ticketFile !== undefined && (await isFile(ticketFile))) {
    const key = `${sandbox}:${ticketFile}`;
    const cached = context.guards.get(key) ?? { guard: await dryRunGuard(ticketFile, context.cwd, context.env, sandbox), root: (await loadTicket(ticketFile)).repo };
    context.guards.set(key, cached);
    return { ...cached, ticket: context.shown(ticketFile) };
  }
  const root = await traceRepository(start, trace);
  if (root === undefined) throw new UsageError(`${context.shown(trace)}: its ticket ${ticketFile ?? '(not recorded)'} is gone and the trace is in no git repository, so there is no config to judge it with`);
  const key = `${sandbox}:repo:${root}`;
  const cached = context.guards.get(key) ?? { guard: await dryRunGuard(undefined, root, context.env, sandbox), root };
  context.guards.set(key, cached);
  const why = ticketFile === undefined ? 'the trace names no ticket' : `ticket ${context.shown(ticketFile)} no longer exists`;
  return { ...cached, ticket: null, note: `${why}: judged with the config of ${path.relative(context.cwd, root) || '.'} and no ticket fence or rules` };
}

/** The repository a run worked on: the one holding its `.corral/runs/<id>` directory, else the one holding the trace. */
async function traceRepository(start: EventOf<'run_start'> | undefined, trace: string): Promise<string | undefined> {
  const runDir = start?.runDir ?? '';
  const marker = `${path.sep}.corral${path.sep}runs${path.sep}`;
  const at = runDir.lastIndexOf(marker);
  if (at > 0) {
    const root = await findRepoRoot(runDir.slice(0, at)).catch(() => null);
    if (root) return root;
  }
  return (await findRepoRoot(path.dirname(trace)).catch(() => null)) ?? undefined;
}

function formatReports(reports: TraceReport[], totals: { traces: number; calls: number; changed: number; otherRule: number }): string {
  const out: string[] = [];
  for (const report of reports) {
    if (report.changed.length === 0 && report.otherRule.length === 0 && report.note === undefined && !report.truncated) continue;
    out.push(`${report.trace}${report.ticket ? `  (ticket ${report.ticket})` : ''}`);
    if (report.note) out.push(`  note: ${report.note}`);
    if (report.truncated) out.push('  note: the trace was cut short; read up to its last whole line');
    for (const change of report.changed) out.push(`  ${changeLine(change)}`);
    if (report.otherRule.length > 0) {
      out.push('  same verdict, other rule:');
      for (const change of report.otherRule) out.push(`    ${changeLine(change)}`);
    }
  }
  const other = totals.otherRule > 0 ? `, ${totals.otherRule} same verdict with another rule` : '';
  out.push(`${totals.traces} trace${totals.traces === 1 ? '' : 's'}, ${totals.calls} call${totals.calls === 1 ? '' : 's'}, ${totals.changed} changed${other}`);
  return `${out.join('\n')}\n`;
}

/** `step 3  Bash(ls)  allow by baseline.read-only → deny by Bash(ls:*) (project)`. */
function changeLine(change: DecisionChange): string {
  return `step ${change.step}  ${change.call}  ${change.then.effect} by ${change.then.rule} → ${change.now.effect} by ${change.now.rule} (${change.now.scope})`;
}

/** The first event of a type, if the trace has one. */
function first<K extends TraceLine['type']>(events: TraceLine[], type: K): Extract<TraceLine, { type: K }> | undefined {
  return events.find((event): event is Extract<TraceLine, { type: K }> => event.type === type);
}

function sum<T>(items: T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}

async function isFile(file: string): Promise<boolean> {
  return stat(file).then((s) => s.isFile(), () => false);
}
