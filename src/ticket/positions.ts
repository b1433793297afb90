import { isMap, isScalar, isSeq, type Document, type LineCounter } from 'yaml';

/** 1-based line and column in the ticket file. */
export interface Position {
  line: number;
  column: number;
}

/** Whether a problem is about a field's name (an unknown key) or its value. */
export type PositionTarget = 'key' | 'value';

/** A problem known by its field path, before it is placed at a line and column. */
export interface FieldProblem {
  path: readonly PropertyKey[];
  target: PositionTarget;
  message: string;
  hint?: string;
}

export interface Locator {
  /**
   * Where the field at `path` is written. A missing field (or an empty value) points
   * at the nearest enclosing node that exists, so the person lands where it belongs.
   */
  locate(path: readonly PropertyKey[], target: PositionTarget): Position;
  /** The position of a character offset in the parsed YAML text. */
  atOffset(offset: number): Position;
}

const FILE_START: Position = { line: 1, column: 1 };

interface Range {
  range?: [number, number, number] | null;
}

/**
 * Maps field paths to positions in `doc`. `lineOffset` is the number of lines of the
 * file before the YAML text (the `---` line of Markdown front matter), so positions
 * are those of the file a person opens.
 */
export function createLocator(doc: Document, lineCounter: LineCounter, lineOffset: number): Locator {
  const atOffset = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line: line + lineOffset, column: col };
  };
  const startOf = (node: Range | null | undefined, allowEmpty: boolean): Position | null => {
    const range = node?.range;
    if (!range) return null;
    // An implicit null (`task:` with nothing after it) has an empty range just past
    // the colon; the key is a better place to point at.
    if (!allowEmpty && range[1] <= range[0]) return null;
    return atOffset(range[0]);
  };
  return {
    atOffset,
    locate(path, target) {
      const found = findNodes(doc.contents, path);
      const key = startOf(found.key, true);
      const value = startOf(found.value, false);
      const enclosing = startOf(found.enclosing, true);
      const preferred = target === 'key' ? (key ?? value) : (value ?? key);
      return preferred ?? enclosing ?? FILE_START;
    },
  };
}

interface FoundNodes {
  /** The deepest node on the path that exists. */
  enclosing: Range | null;
  key?: Range;
  value?: Range | null;
}

function findNodes(root: unknown, path: readonly PropertyKey[]): FoundNodes {
  let current: unknown = root;
  for (const [index, segment] of path.entries()) {
    const last = index === path.length - 1;
    const enclosing = current as Range | null;
    if (isMap(current)) {
      const pair = current.items.find((p) => isScalar(p.key) && String(p.key.value) === String(segment));
      if (!pair) return { enclosing };
      if (last) return { enclosing, key: pair.key as Range, value: pair.value as Range | null };
      current = pair.value;
    } else if (isSeq(current) && typeof segment === 'number') {
      const item = current.items[segment];
      if (item === undefined) return { enclosing };
      if (last) return { enclosing, value: item as Range | null };
      current = item;
    } else {
      return { enclosing };
    }
  }
  return { enclosing: current as Range | null, value: current as Range | null };
}
