import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { TRACE_VERSION } from './trace.js';

/** One line of a trace: the writer's envelope (v, seq, time, run, ticket, step) around a RunEvent. */
export type TraceLine = Record<string, unknown> & { type: string };

export interface ParsedTrace {
  events: TraceLine[];
  /** Lines that were not one JSON object with a type: a last line cut short by a crash, or damage. */
  skipped: { line: number; text: string }[];
}

/**
 * Parses a trace tolerantly: one JSON object a line. A line that does not parse (most often
 * the last one, half-written when the process died) is skipped and counted, never fatal.
 * A line written by a newer trace format is refused: its meaning cannot be guessed.
 */
export function parseTrace(text: string): ParsedTrace {
  const events: TraceLine[] = [];
  const skipped: ParsedTrace['skipped'] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped.push({ line: index + 1, text: line.slice(0, 80) });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      skipped.push({ line: index + 1, text: line.slice(0, 80) });
      return;
    }
    const version = (value as { v?: unknown }).v;
    if (typeof version === 'number' && version > TRACE_VERSION) {
      throw new UsageError(`line ${index + 1} of the trace is format version ${version}; this corral reads version ${TRACE_VERSION} and older`);
    }
    events.push(value as TraceLine);
  });
  return { events, skipped };
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
