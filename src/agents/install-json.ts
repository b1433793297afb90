// A JSON document edited as text: every value's place is known, so an entry is added or
// removed by splicing the text around it, and every other byte of the file (its
// indentation, key order, line breaks, even a one-line array) stays as the person wrote
// it. Removing what was added gives the original bytes back.

export type JsonNode =
  | { kind: 'object'; start: number; end: number; members: JsonMember[] }
  | { kind: 'array'; start: number; end: number; elements: JsonNode[] }
  | { kind: 'scalar'; start: number; end: number; value: string | number | boolean | null };

export interface JsonMember {
  key: string;
  /** Where the key's opening quote is: a member runs from here to its value's end. */
  keyStart: number;
  value: JsonNode;
}

/** Where a text stops being JSON: offset and 1-based line and column. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly offset: number,
    readonly line: number,
    readonly column: number,
  ) {
    super(message);
    this.name = 'JsonSyntaxError';
  }
}

/** Parses strict JSON (RFC 8259: no comments, no trailing commas) into nodes with their places. */
export function parseJsonText(text: string): JsonNode {
  let at = 0;
  const fail = (message: string, offset = at): never => {
    const before = text.slice(0, offset);
    const line = before.split('\n').length;
    const column = offset - (before.lastIndexOf('\n') + 1) + 1;
    throw new JsonSyntaxError(offset >= text.length ? `${message} (the text ends here)` : message, offset, line, column);
  };
  const skipSpace = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at]!)) at += 1;
  };
  const expect = (char: string): void => {
    if (text[at] !== char) fail(`expected ${JSON.stringify(char)}${at < text.length ? `, found ${JSON.stringify(text[at])}` : ''}`);
    at += 1;
  };
  const parseString = (): string => {
    const start = at;
    expect('"');
    while (at < text.length && text[at] !== '"') {
      const code = text.charCodeAt(at);
      if (code < 0x20) fail('a control character inside a string must be escaped');
      if (text[at] === '\\') {
        const escape = text[at + 1];
        if (escape === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 2, at + 6))) fail('\\u takes four hex digits', at);
          at += 6;
          continue;
        }
        if (escape === undefined || !'"\\/bfnrt'.includes(escape)) fail(`not a JSON escape: \\${escape ?? ''}`);
        at += 2;
        continue;
      }
      at += 1;
    }
    expect('"');
    return JSON.parse(text.slice(start, at)) as string;
  };
  const parseValue = (depth: number): JsonNode => {
    if (depth > 512) fail('nested too deeply');
    skipSpace();
    const start = at;
    const char = text[at];
    if (char === '{') {
      at += 1;
      const members: JsonMember[] = [];
      skipSpace();
      if (text[at] === '}') {
        at += 1;
        return { kind: 'object', start, end: at, members };
      }
      for (;;) {
        skipSpace();
        const keyStart = at;
        if (text[at] !== '"') fail('expected a key in double quotes');
        const key = parseString();
        skipSpace();
        expect(':');
        members.push({ key, keyStart, value: parseValue(depth + 1) });
        skipSpace();
        if (text[at] === ',') {
          at += 1;
          continue;
        }
        expect('}');
        return { kind: 'object', start, end: at, members };
      }
    }
    if (char === '[') {
      at += 1;
      const elements: JsonNode[] = [];
      skipSpace();
      if (text[at] === ']') {
        at += 1;
        return { kind: 'array', start, end: at, elements };
      }
      for (;;) {
        elements.push(parseValue(depth + 1));
        skipSpace();
        if (text[at] === ',') {
          at += 1;
          continue;
        }
        expect(']');
        return { kind: 'array', start, end: at, elements };
      }
    }
    if (char === '"') {
      const value = parseString();
      return { kind: 'scalar', start, end: at, value };
    }
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(text.slice(at, at + 400));
    if (!literal) return fail(at >= text.length ? 'expected a value' : `unexpected ${JSON.stringify(char)}`);
    at += literal[0].length;
    return { kind: 'scalar', start, end: at, value: JSON.parse(literal[0]) as string | number | boolean | null };
  };
  const root = parseValue(0);
  skipSpace();
  if (at < text.length) fail(`unexpected ${JSON.stringify(text[at])} after the end of the value`);
  return root;
}

/** The plain value of a node. */
export function valueOf(node: JsonNode): unknown {
  if (node.kind === 'scalar') return node.value;
  if (node.kind === 'array') return node.elements.map(valueOf);
  return Object.fromEntries(node.members.map((member) => [member.key, valueOf(member.value)]));
}

/** How the document lays itself out, so what is added looks like what is there. */
export interface JsonStyle {
  /** One level of indentation: two spaces unless the file uses another. */
  indent: string;
  eol: '\n' | '\r\n';
}

export function styleOf(text: string): JsonStyle {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const indent = /\n([ \t]+)\S/.exec(text)?.[1] ?? '  ';
  return { indent, eol };
}

/** `text` with `[start, end)` replaced. */
function splice(text: string, start: number, end: number, insert: string): string {
  return text.slice(0, start) + insert + text.slice(end);
}

/** The whitespace before `offset` on its line, when only whitespace is there: that item's indentation. */
function indentationAt(text: string, offset: number): string | undefined {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1;
  const before = text.slice(lineStart, offset);
  return /^[ \t]*$/.test(before) ? before : undefined;
}

/** Serializes `value` for a place whose own line starts with `baseIndent`. */
function render(value: unknown, baseIndent: string, style: JsonStyle, multiline: boolean): string {
  if (!multiline) return JSON.stringify(value);
  return JSON.stringify(value, null, style.indent).split('\n').join(`${style.eol}${baseIndent}`);
}

/**
 * Adds an element at the end of an array, or a member at the end of an object, written as
 * its neighbours are: on a line of its own at their indentation, or inline in a one-line
 * container. `depth` is the container's nesting (the root is 0).
 */
export function appendTo(text: string, container: JsonNode, depth: number, entry: { key?: string; value: unknown }, style: JsonStyle): string {
  if (container.kind === 'scalar') throw new Error('appendTo: not a container');
  const items = container.kind === 'object' ? container.members.map((m) => ({ start: m.keyStart, end: m.value.end })) : container.elements.map((e) => ({ start: e.start, end: e.end }));
  const prefix = (indent: string, multiline: boolean): string => (entry.key === undefined ? '' : `${JSON.stringify(entry.key)}: `) + render(entry.value, indent, style, multiline);
  const last = items.at(-1);
  if (last === undefined) {
    // An empty container opens onto lines of its own, as JSON.stringify would write it.
    const closeIndent = indentationAt(text, container.start) ?? style.indent.repeat(depth);
    const itemIndent = closeIndent + style.indent;
    return splice(text, container.start + 1, container.end - 1, `${style.eol}${itemIndent}${prefix(itemIndent, true)}${style.eol}${closeIndent}`);
  }
  const first = items[0]!;
  const multiline = /\n/.test(text.slice(container.start, first.start));
  if (!multiline) return splice(text, last.end, last.end, `, ${prefix('', false)}`);
  const itemIndent = indentationAt(text, last.start) ?? style.indent.repeat(depth + 1);
  return splice(text, last.end, last.end, `,${style.eol}${itemIndent}${prefix(itemIndent, true)}`);
}

/**
 * Removes the item at `index` (an element, or a member with its key) with the comma and
 * space that joined it: the inverse of `appendTo`. The last item leaves `[]` or `{}`.
 */
export function removeFrom(text: string, container: JsonNode, index: number): string {
  if (container.kind === 'scalar') throw new Error('removeFrom: not a container');
  const items = container.kind === 'object' ? container.members.map((m) => ({ start: m.keyStart, end: m.value.end })) : container.elements.map((e) => ({ start: e.start, end: e.end }));
  const item = items[index];
  if (item === undefined) throw new Error('removeFrom: no such item');
  if (items.length === 1) return splice(text, container.start + 1, container.end - 1, '');
  if (index > 0) return splice(text, items[index - 1]!.end, item.end, '');
  return splice(text, item.start, items[1]!.start, '');
}

/** Replaces one node's text with `value`, written in one line. */
export function replaceValue(text: string, node: JsonNode, value: unknown): string {
  return splice(text, node.start, node.end, JSON.stringify(value));
}
