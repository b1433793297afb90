import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { TRACE_VERSION } from './write.js';

/** One line of a trace: the writer's envelope (v, seq, time, run, ticket, step) around a RunEvent. */
export type TraceLine = Record<string, unknown> & { type: string };

export interface ParsedTrace {
  events: TraceLine[];
  /** Lines that were not one JSON object with a type: a last line cut short by a crash, or damage. */
  skipped: { line: number; text: string }[];
}

/** A trace's lines sorted once, for the tolerant reader here and the strict one of replays. */
export interface TraceLines {
  events: { line: number; event: TraceLine }[];
  /** Lines that are not one JSON object with a `type`, with why. */
  bad: { line: number; text: string; why: string }[];
  /** The last line is bad and has no newline: a crash mid-append, not damage. */
  cutLast: boolean;
  /** The first line written by a newer format than this corral reads, if any. */
  newer?: { line: number; version: number };
}

/** Splits a trace into events and bad lines; never throws. */
export function splitTrace(text: string): TraceLines {
  const result: TraceLines = { events: [], bad: [], cutLast: false };
  const raw = text.split('\n');
  raw.forEach((rawLine, index) => {
    const line = rawLine.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      result.bad.push({ line: index + 1, text: line.slice(0, 80), why: 'not a JSON line' });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      result.bad.push({ line: index + 1, text: line.slice(0, 80), why: 'not a trace event (a JSON object with a `type`)' });
      return;
    }
    const version = (value as { v?: unknown }).v;
    if (typeof version === 'number' && version > TRACE_VERSION) result.newer ??= { line: index + 1, version };
    result.events.push({ line: index + 1, event: value as TraceLine });
  });
  const lastLine = raw.findLastIndex((line) => line.trim() !== '') + 1;
  result.cutLast = !text.endsWith('\n') && result.bad.at(-1)?.line === lastLine;
  return result;
}

/**
 * Parses a trace tolerantly: one JSON object a line. A line that does not parse (most often
 * the last one, half-written when the process died) is skipped and counted, never fatal.
 * A line written by a newer trace format is refused: its meaning cannot be guessed.
 */
export function parseTrace(text: string): ParsedTrace {
  const split = splitTrace(text);
  if (split.newer) {
    throw new UsageError(`line ${split.newer.line} of the trace is format version ${split.newer.version}; this corral reads version ${TRACE_VERSION} and older`);
  }
  return { events: split.events.map(({ event }) => event), skipped: split.bad.map(({ line, text: shown }) => ({ line, text: shown })) };
}

/** The trace file a user means: a run directory's trace.jsonl, or the file itself. Exit 64 when there is none. */
export async function resolveTraceFile(target: string): Promise<string> {
  const info = await stat(target).catch(() => null);
  if (!info) throw new UsageError(`no such run directory or trace file: ${target}`);
  if (!info.isDirectory()) return target;
  const file = path.join(target, 'trace.jsonl');
  const inside = await stat(file).catch(() => null);
  if (!inside?.isFile()) throw new UsageError(`${target} is a directory without a trace.jsonl: give a run directory (.corral/runs/<run>) or a trace file`);
  return file;
}

/** Reads and parses the trace of a run directory or trace file. */
export async function readTrace(target: string): Promise<ParsedTrace & { file: string }> {
  const file = await resolveTraceFile(target);
  const text = await readFile(file, 'utf8').catch((error: unknown) => {
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  });
  return { file, ...parseTrace(text) };
}
