// The `structuredPatch` of Claude Code's Write and Edit results, which PostToolUse hooks
// read: hunks of `' '` context, `'-'` removed and `'+'` added lines. One hunk around the
// changed lines (their common start and end trimmed), with three lines of context: not
// always the smallest diff, but a true one, without a diff library.

export interface PatchHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

const CONTEXT = 3;

export function structuredPatch(before: string, after: string): PatchHunk[] {
  if (before === after) return [];
  const old = splitLines(before);
  const next = splitLines(after);
  let head = 0;
  while (head < old.length && head < next.length && old[head] === next[head]) head++;
  let tail = 0;
  while (tail < old.length - head && tail < next.length - head && old[old.length - 1 - tail] === next[next.length - 1 - tail]) tail++;
  const from = Math.max(0, head - CONTEXT);
  const oldEnd = Math.min(old.length, old.length - tail + CONTEXT);
  const newEnd = Math.min(next.length, next.length - tail + CONTEXT);
  const lines = [
    ...old.slice(from, head).map((line) => ` ${line}`),
    ...old.slice(head, old.length - tail).map((line) => `-${line}`),
    ...next.slice(head, next.length - tail).map((line) => `+${line}`),
    ...old.slice(old.length - tail, oldEnd).map((line) => ` ${line}`),
  ];
  const oldLines = oldEnd - from;
  const newLines = newEnd - from;
  // As in a unified diff, an empty side starts at the line before it.
  return [{ oldStart: oldLines === 0 ? from : from + 1, oldLines, newStart: newLines === 0 ? from : from + 1, newLines, lines }];
}

/** Lines without their endings; a final newline ends the last line, it does not start another. */
function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines;
}
