import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError, type Problem } from '../errors.js';
import { TraceLineSchema, EVENT_TYPES, type TraceLine } from './events.js';
import { TRACE_VERSION } from './write.js';

// The one reader of trace files. Every line is checked against the event schema, so what
// comes out is typed and nobody downstream coerces a field by hand.
//
// strict: a line that is not a valid event is an error naming file:line and the field. For
//   what must not lose an event silently: a replay of the model's turns or of the decisions.
// tolerant: such lines are skipped and counted. For reading a run at a glance, whatever
//   state a crash, an older corral or a hand edit left the file in.
// In both, a last line cut short by a crash mid-append (no newline after it) is dropped
// and said (`cut`): everything before it stands. A line of a newer format is refused by
// both, as its meaning cannot be guessed.

export type ReadMode = 'strict' | 'tolerant';

/** Why a trace could not be read; each is exit 64 (a UsageError), told apart by its code. */
export type TraceErrorCode = 'trace_missing' | 'trace_unreadable' | 'trace_not_json' | 'trace_not_event' | 'trace_invalid_event' | 'trace_newer_format';

export class TraceReadError extends UsageError {
  constructor(
    readonly code: TraceErrorCode,
    message: string,
    problems: Problem[] = [],
  ) {
    super(message, problems);
    this.name = 'TraceReadError';
  }
}

/** A line left out of what was read. */
export interface SkippedLine {
  line: number;
  /** Its first 80 characters. */
  text: string;
  why: string;
}

export interface TraceRead {
  /** The file as given (or shown). */
  file: string;
  /** The valid events, in file order. */
  events: TraceLine[];
  /** Lines left out: a cut last line in either mode, and in tolerant mode every invalid line. */
  skipped: SkippedLine[];
  /** The last line was cut short (a crash mid-write) and was left out. */
  cut: boolean;
}

export interface ReadOptions {
  mode: ReadMode;
}

interface LineProblem {
  code: TraceErrorCode;
  field: string;
  message: string;
  hint?: string;
}

const KNOWN_TYPES = new Set<string>(EVENT_TYPES);

/** Reads one line; a problem when it is not a valid event of this format. */
function readLine(text: string): { event: TraceLine } | LineProblem {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { code: 'trace_not_json', field: '', message: 'not a JSON line' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
    return { code: 'trace_not_event', field: '', message: 'not a trace event (a JSON object with a `type`)' };
  }
  const { type, v } = value as { type: string; v?: unknown };
  if (typeof v === 'number' && v > TRACE_VERSION) {
    return { code: 'trace_newer_format', field: 'v', message: `trace format version ${v} is newer than this corral reads (${TRACE_VERSION} and older)`, hint: 'use the corral that wrote the trace, or a newer one' };
  }
  if (!KNOWN_TYPES.has(type)) return { code: 'trace_invalid_event', field: 'type', message: `unknown event type \`${type}\`` };
  const parsed = TraceLineSchema.safeParse(value);
  if (parsed.success) return { event: parsed.data };
  const issue = parsed.error.issues[0]!;
  return { code: 'trace_invalid_event', field: issue.path.join('.'), message: `${type}: ${issue.message}` };
}

/** Reads a trace's text; `file` names it in errors and in the result. */
export function parseTrace(text: string, file: string, options: ReadOptions): TraceRead {
  const result: TraceRead = { file, events: [], skipped: [], cut: false };
  const raw = text.split('\n');
  const last = raw.findLastIndex((line) => line.trim() !== '');
  let firstProblem: { line: number; problem: LineProblem } | undefined;
  raw.forEach((rawLine, index) => {
    const line = rawLine.trim();
    if (line === '') return;
    const read = readLine(line);
    if ('event' in read) {
      result.events.push(read.event);
      return;
    }
    const skipped = { line: index + 1, text: line.slice(0, 80), why: read.message };
    if (read.code === 'trace_newer_format' || options.mode === 'strict') {
      // A crash mid-append leaves the last line without its end: not damage, in either mode.
      if (index === last && !text.endsWith('\n') && read.code !== 'trace_newer_format') {
        result.cut = true;
        result.skipped.push(skipped);
        return;
      }
      throw traceError(file, index + 1, read);
    }
    result.skipped.push(skipped);
    const cut = index === last && !text.endsWith('\n');
    // The start of the writer's first line, cut by a crash, is still a trace's.
    if (!(cut && line.startsWith('{"v":'))) firstProblem ??= { line: index + 1, problem: read };
    if (cut) result.cut = true;
  });
  // Tolerance is for a trace that a crash or a hand cut short, not for any file at all: one
  // with lines but not a single event (a random file, binary data, another program's JSON)
  // is refused. An empty file stays a trace: a run whose first line found the disk full.
  if (result.events.length === 0 && firstProblem !== undefined) throw traceError(file, firstProblem.line, firstProblem.problem, 'not a corral trace');
  return result;
}

function traceError(file: string, line: number, problem: LineProblem, what = 'invalid trace line'): TraceReadError {
  const field = problem.field ? ` ${problem.field}:` : '';
  return new TraceReadError(problem.code, `${file}:${line}: ${what}:${field} ${problem.message}`, [
    { file, line, column: 1, field: problem.field, message: problem.message, ...(problem.hint ? { hint: problem.hint } : {}) },
  ]);
}

/** The trace file a user means: a run directory's trace.jsonl, or the file itself. Exit 64 when there is none. */
export async function resolveTraceFile(target: string): Promise<string> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new TraceReadError('trace_missing', `no such run directory or trace file: ${target}`);
  // Not read at all: a device or a pipe could be endless.
  if (!info.isDirectory() && !info.isFile()) throw new TraceReadError('trace_unreadable', `${target} is not a file: give a run directory (.corral/runs/<run>) or its trace.jsonl`);
  if (!info.isDirectory()) return target;
  const file = path.join(target, 'trace.jsonl');
  const inside = await stat(file).catch(() => null);
  if (!inside?.isFile()) throw new TraceReadError('trace_missing', `${target} is a directory without a trace.jsonl: give a run directory (.corral/runs/<run>) or a trace file`);
  return file;
}

/** Reads a trace file; `shownAs` names it in errors (default: the path given). */
export async function readTrace(file: string, options: ReadOptions & { shownAs?: string }): Promise<TraceRead> {
  const shown = options.shownAs ?? file;
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new TraceReadError('trace_unreadable', `cannot read ${shown}: ${error instanceof Error ? error.message : String(error)}`);
  });
  return parseTrace(text, shown, options);
}
