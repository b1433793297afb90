import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';

// Reads a range of lines by streaming the file, holding only the lines asked for (each
// cut to a maximum length), so a huge file or a single enormous line costs no memory.

export interface LineRangeRequest {
  /** 1-based number of the first line wanted. */
  firstLine: number;
  maxLines: number;
  maxLineChars: number;
}

export interface NumberedLine {
  number: number;
  text: string;
  /** The line was longer than maxLineChars and was cut. */
  cut: boolean;
}

export interface LineRange {
  lines: NumberedLine[];
  /** There is content after the last line returned. */
  moreFollow: boolean;
  /** Lines in the whole file, known only when the read reached the end. */
  lineCount: number | undefined;
}

export async function readLineRange(file: string, request: LineRangeRequest): Promise<LineRange> {
  const lastLine = request.firstLine + request.maxLines - 1;
  const lines: NumberedLine[] = [];
  let lineNumber = 1;
  let current = '';
  let cut = false;
  let lineStarted = false;

  const isWanted = (): boolean => lineNumber >= request.firstLine && lineNumber <= lastLine;
  const append = (piece: string): void => {
    if (piece.length > 0) lineStarted = true;
    if (!isWanted() || cut) return;
    const room = request.maxLineChars - current.length;
    if (piece.length > room) {
      current += piece.slice(0, room);
      cut = true;
    } else {
      current += piece;
    }
  };
  const endLine = (): void => {
    if (isWanted()) lines.push({ number: lineNumber, text: current.endsWith('\r') ? current.slice(0, -1) : current, cut });
    current = '';
    cut = false;
    lineStarted = false;
    lineNumber++;
  };

  const stream = createReadStream(file);
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const text = decoder.write(chunk);
      let start = 0;
      while (start < text.length) {
        if (lineNumber > lastLine) return { lines, moreFollow: true, lineCount: undefined };
        const newline = text.indexOf('\n', start);
        if (newline === -1) {
          append(text.slice(start));
          break;
        }
        append(text.slice(start, newline));
        endLine();
        start = newline + 1;
      }
    }
  } finally {
    stream.destroy();
  }
  append(decoder.end());
  if (lineStarted) endLine();
  return { lines, moreFollow: false, lineCount: lineNumber - 1 };
}
