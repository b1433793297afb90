import { CappedOutput } from '../text/output-cap.js';
import type { FileMatches } from './grep-matcher.js';

// Renders Grep's content mode the way ripgrep does: `path:12:text` for a matching line,
// `path-13-text` for context, `--` between groups that are not adjacent. Lines go
// straight into a capped buffer, so a search with a million hits stays small in memory.

export interface ContentOptions {
  before: number;
  after: number;
  lineNumbers: boolean;
  /** Stop after this many printed lines (separators not counted). */
  headLimit: number | undefined;
  outputCap: number;
}

export interface FileHits {
  shownPath: string;
  matches: FileMatches;
}

const MAX_LINE_CHARS = 2000;

export function formatContent(files: FileHits[], options: ContentOptions): string {
  const out = new CappedOutput(options.outputCap);
  const withContext = options.before > 0 || options.after > 0;
  const limit = options.headLimit ?? Infinity;
  let printed = 0;
  let printedAny = false;

  const print = (file: FileHits, index: number): void => {
    const isMatch = file.matches.matchedLines.has(index);
    const separator = isMatch ? ':' : '-';
    const number = options.lineNumbers ? `${index + 1}${separator}` : '';
    out.push(Buffer.from(`${file.shownPath}${separator}${number}${cutLine(file.matches.lines[index] ?? '')}\n`));
    printed++;
    printedAny = true;
  };

  for (const file of files) {
    let lastPrinted = -1;
    const matched = [...file.matches.matchedLines].sort((a, b) => a - b);
    for (const line of matched) {
      const from = Math.max(line - options.before, lastPrinted + 1);
      const to = Math.min(line + options.after, file.matches.lines.length - 1);
      if (to < from) continue;
      if (withContext && printedAny && from > lastPrinted + 1) out.push(Buffer.from('--\n'));
      for (let index = from; index <= to; index++) {
        if (printed >= limit) return finish(out, `[Stopped at head_limit ${limit}.]`);
        print(file, index);
      }
      lastPrinted = to;
    }
  }
  return finish(out, undefined);
}

function finish(out: CappedOutput, note: string | undefined): string {
  const text = out.text().replace(/\n$/, '');
  return note ? `${text}\n${note}` : text;
}

function cutLine(line: string): string {
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)} [... line cut]` : line;
}
