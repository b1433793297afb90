import { LineCounter, parseDocument, type YAMLError } from 'yaml';
import { splitFrontMatter } from './front-matter.js';
import { createLocator, type Locator, type Position } from './positions.js';

export type TicketFormat = 'yaml' | 'markdown';

/** A problem found before there are fields to name: the file's syntax or shape. */
export interface TextProblem extends Position {
  message: string;
  hint?: string;
}

export interface ParsedTicketText {
  /** The YAML as plain data; an empty file or front matter is an empty mapping. */
  data: unknown;
  locator: Locator;
  /** The task written after the front matter of a Markdown ticket. */
  markdownBody?: string;
  /** YAML warnings, reported with the schema's problems. */
  warnings: TextProblem[];
}

/**
 * Parses a ticket's text into data and a locator that maps field paths back to the
 * file's lines. YAML errors come back as problems and no data: once the syntax is
 * broken, schema errors would only describe the parser's guesses. Warnings (an
 * unresolved tag, for one, means a value is not what was meant) come with the data.
 */
export function parseTicketText(text: string, format: TicketFormat): ParsedTicketText | { problems: TextProblem[] } {
  let yaml = text;
  let lineOffset = 0;
  let markdownBody: string | undefined;
  if (format === 'markdown') {
    const split = splitFrontMatter(text);
    if ('message' in split) return { problems: [{ line: split.line, column: 1, message: split.message, hint: split.hint }] };
    ({ yaml, lineOffset } = split);
    markdownBody = split.body;
  }

  const lineCounter = new LineCounter();
  const doc = parseDocument(yaml, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const locator = createLocator(doc, lineCounter, lineOffset);
  const toProblem = (error: YAMLError): TextProblem => ({ ...locator.atOffset(error.pos[0]), message: `YAML: ${error.message}` });
  if (doc.errors.length > 0) return { problems: doc.errors.map(toProblem) };
  const warnings = doc.warnings.map(toProblem);

  try {
    // Bounded alias expansion: a "billion laughs" ticket must not hang the loader.
    const data: unknown = doc.contents === null ? {} : doc.toJS({ maxAliasCount: 100 });
    return { data, locator, markdownBody, warnings };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { problems: [{ line: 1, column: 1, message: `YAML: ${message}` }] };
  }
}
