/** A Markdown ticket split into its YAML front matter and its body. */
export interface FrontMatterSplit {
  yaml: string;
  /** Lines of the file before the first YAML line (the opening `---`). */
  lineOffset: number;
  /** The text after the closing `---`, trimmed; the task. */
  body: string;
}

export interface FrontMatterError {
  line: number;
  message: string;
  hint: string;
}

const FENCE = /^---[ \t]*$/;

/**
 * Splits a Markdown ticket: a first line `---`, YAML, a line `---`, then the body.
 * Lines are kept one for one so positions in the YAML map back to the file.
 */
export function splitFrontMatter(text: string): FrontMatterSplit | FrontMatterError {
  const lines = text.split(/\r?\n/);
  if (!FENCE.test(lines[0] ?? '')) {
    return {
      line: 1,
      message: 'a Markdown ticket must start with YAML front matter',
      hint: 'put the fields between a first line `---` and a closing `---` line, then the task',
    };
  }
  const close = lines.findIndex((line, index) => index > 0 && FENCE.test(line));
  if (close < 0) {
    return {
      line: 1,
      message: 'the front matter is not closed',
      hint: 'end the fields with a line `---`; the task goes after it',
    };
  }
  return {
    yaml: lines.slice(1, close).join('\n'),
    lineOffset: 1,
    body: lines.slice(close + 1).join('\n').trim(),
  };
}
