// Finds which lines of one file's text match a regular expression. Pure, so the Grep
// tool's walking, filtering and formatting stay apart from the matching rules.

export interface FileMatches {
  lines: string[];
  /** 0-based indices of lines that hold (part of) a match. */
  matchedLines: Set<number>;
  /** Matching lines, or matches when multiline (a match may span lines). */
  matchCount: number;
}

export interface GrepRegex {
  regex: RegExp;
  multiline: boolean;
}

/** Builds the regex, or returns the reason it is invalid. */
export function compileGrepRegex(
  pattern: string,
  options: { ignoreCase: boolean; multiline: boolean },
): GrepRegex | { error: string } {
  // Multiline: search the whole text, `.` crosses newlines and ^/$ still anchor at
  // line boundaries (as ripgrep's --multiline --multiline-dotall). Line by line the
  // regex has no `g` flag, so `test` keeps no state between lines.
  const flags = (options.multiline ? 'gms' : '') + (options.ignoreCase ? 'i' : '');
  try {
    return { regex: new RegExp(pattern, flags), multiline: options.multiline };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

export function findMatches(text: string, { regex, multiline }: GrepRegex): FileMatches {
  const lines = splitLines(text);
  return multiline ? findAcrossLines(text, lines, regex) : findPerLine(lines, regex);
}

function findPerLine(lines: string[], regex: RegExp): FileMatches {
  const matchedLines = new Set<number>();
  lines.forEach((line, index) => {
    if (regex.test(line)) matchedLines.add(index);
  });
  return { lines, matchedLines, matchCount: matchedLines.size };
}

function findAcrossLines(text: string, lines: string[], regex: RegExp): FileMatches {
  const lineStarts = startOffsets(text, lines.length);
  const matchedLines = new Set<number>();
  let matchCount = 0;
  // A fresh regex per text: a global regex carries lastIndex between calls.
  const global = new RegExp(regex.source, regex.flags);
  for (let match = global.exec(text); match !== null; match = global.exec(text)) {
    matchCount++;
    const first = lineAt(lineStarts, match.index);
    const last = lineAt(lineStarts, match.index + Math.max(match[0].length - 1, 0));
    for (let line = first; line <= last && line < lines.length; line++) matchedLines.add(line);
    if (match[0].length === 0) global.lastIndex++;
  }
  return { lines, matchedLines, matchCount };
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (text.endsWith('\n')) lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Offset in `text` where each of its first `lineCount` lines starts. */
function startOffsets(text: string, lineCount: number): number[] {
  const starts = [0];
  for (let newline = text.indexOf('\n'); newline !== -1 && starts.length < lineCount; newline = text.indexOf('\n', newline + 1)) {
    starts.push(newline + 1);
  }
  return starts;
}

/** Index of the line holding `offset`: the last line start at or before it. */
function lineAt(starts: number[], offset: number): number {
  let low = 0;
  let high = starts.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (starts[middle]! <= offset) low = middle;
    else high = middle - 1;
  }
  return low;
}
