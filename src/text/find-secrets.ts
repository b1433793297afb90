// Finds secrets in text, two ways: the values of corral's own secret-named variables
// (as they are, and encoded as base64 or hex, which is how an environment dump leaves a
// sandbox unrecognised), and strings shaped like well-known credentials (secret-shapes.ts).
// The redactor and the fence's check on the patch both ask this module, so they agree.
import { SECRET_SHAPES } from './secret-shapes.js';

export interface SecretValue {
  name: string;
  value: string;
}

export interface SecretFinding {
  /** A variable's name (its value), `NAME as base64|hex` (an encoding of it), or a shape's rule. */
  rule: string;
  start: number;
  /** Exclusive. */
  end: number;
}

export type SecretFinder = (text: string) => SecretFinding[];

interface Needle {
  rule: string;
  text: string;
  /** Looked for with whitespace and line breaks removed: encoders wrap their output. */
  wrapped: boolean;
  /** Lower beats higher when findings overlap: a value's own name is the most telling. */
  rank: number;
}

/**
 * A finder for these secrets. `bytes: true` reads the text as bytes, one character a byte
 * (latin1), as a patch is read: a value is then looked for as its UTF-8 bytes.
 */
export function createSecretFinder(secrets: readonly SecretValue[], options: { bytes?: boolean } = {}): SecretFinder {
  // A needle this short would be found by chance (and an empty one everywhere).
  const needles = secrets.flatMap((secret) => needlesOf(secret, options.bytes ?? false)).filter((needle) => needle.text.length >= 8);
  // One pass for all needles of a kind: a regex of alternatives, longest first.
  const search = (list: Needle[]) => {
    const byText = new Map(list.map((needle) => [needle.text, needle]));
    const pattern = list.length > 0 ? new RegExp([...byText.keys()].sort((x, y) => y.length - x.length).map(escapeRegExp).join('|'), 'g') : undefined;
    return (text: string) => (pattern ? [...text.matchAll(pattern)].map((match) => ({ at: match.index, needle: byText.get(match[0])! })) : []);
  };
  const searchAsIs = search(needles.filter((needle) => !needle.wrapped));
  const searchWrapped = search(needles.filter((needle) => needle.wrapped));
  return (text) => {
    const found: Array<SecretFinding & { rank: number }> = [];
    for (const { at, needle } of searchAsIs(text)) found.push({ rule: needle.rule, start: at, end: at + needle.text.length, rank: needle.rank });
    const unwrapped = text.replace(LINE_BREAK, '');
    const hits = searchWrapped(unwrapped);
    if (hits.length > 0) {
      const origin = originOf(text);
      for (const { at, needle } of hits) found.push({ rule: needle.rule, start: origin(at), end: origin(at + needle.text.length - 1) + 1, rank: needle.rank });
    }
    for (const finding of findShapes(text)) found.push({ ...finding, rank: 2 });
    return merge(found);
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Shape-only findings, for text with no environment at hand. */
export const findSecretShapes: SecretFinder = (text) => merge(findShapes(text).map((finding) => ({ ...finding, rank: 2 })));

const ALL_KEYWORDS = [...new Set(SECRET_SHAPES.flatMap((shape) => shape.keywords))].sort((x, y) => y.length - x.length);
/** All keywords, in one pass; the longest wins where several start, so each implies those inside it. */
const KEYWORDS = new RegExp(ALL_KEYWORDS.map(escapeRegExp).join('|'), 'g');
const IMPLIED = new Map(ALL_KEYWORDS.map((keyword) => [keyword, ALL_KEYWORDS.filter((inner) => keyword.includes(inner))]));

function findShapes(text: string): SecretFinding[] {
  const found: SecretFinding[] = [];
  // As gitleaks does: a regex runs only on text that holds one of its rule's keywords.
  const present = new Set(Array.from(text.matchAll(KEYWORDS), (match) => IMPLIED.get(match[0])!).flat());
  for (const shape of SECRET_SHAPES) {
    if (!shape.keywords.some((keyword) => present.has(keyword))) continue;
    for (const match of text.matchAll(shape.pattern)) {
      let start = match.index;
      if (shape.before) {
        const from = Math.max(0, match.index - 32);
        const before = shape.before.exec(`${from === 0 ? ' ' : ''}${text.slice(from, match.index)}`);
        if (!before) continue;
        const lead = before.indices?.groups?.['lead'];
        if (lead) start = from + lead[0] - (from === 0 ? 1 : 0);
      }
      const span = match.indices?.groups?.['secret'] ?? [start, match.index + match[0].length];
      const secret = text.slice(span[0], span[1]);
      if (shape.allow?.test(secret)) continue;
      if (match.groups?.['user'] === secret) continue;
      if (shape.entropy !== undefined && shannonEntropy(secret) < shape.entropy) continue;
      found.push({ rule: shape.rule, start: span[0], end: extendToTokenEnd(text, span[1]) });
    }
  }
  return found;
}

/** A shape of fixed length inside a longer token still hides the whole token. */
function extendToTokenEnd(text: string, end: number): number {
  while (end < text.length && /[A-Za-z0-9_]/.test(text[end]!)) end++;
  return end;
}

export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const char of text) counts.set(char, (counts.get(char) ?? 0) + 1);
  let entropy = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    entropy -= p * Math.log2(p);
  }
  return entropy;
}

function needlesOf({ name, value }: SecretValue, bytes: boolean): Needle[] {
  const raw = Buffer.from(value, 'utf8');
  const asText = bytes ? raw.toString('latin1') : value;
  const needles: Needle[] = [{ rule: name, text: asText, wrapped: false, rank: 0 }];
  // In a JSON line (a trace event, an approval) a quote or backslash in the value is escaped.
  const inJson = JSON.stringify(asText).slice(1, -1);
  if (inJson !== asText) needles.push({ rule: name, text: inJson, wrapped: false, rank: 0 });
  const inUrl = encodeURIComponent(value);
  if (inUrl !== value) needles.push({ rule: name, text: inUrl, wrapped: false, rank: 0 });
  for (const text of base64Forms(raw)) needles.push({ rule: `${name} as base64`, text, wrapped: true, rank: 1 });
  const hex = raw.toString('hex');
  for (const text of new Set([hex, hex.toUpperCase()])) needles.push({ rule: `${name} as hex`, text, wrapped: true, rank: 1 });
  return needles;
}

/**
 * The base64 of `bytes` wherever they fall in a longer encoded stream: one form for each of
 * the three byte offsets modulo 3, each cut to the characters that depend on `bytes` alone,
 * in the standard and the URL-safe alphabets.
 */
export function base64Forms(bytes: Buffer): string[] {
  const forms = new Set<string>();
  for (const offset of [0, 1, 2]) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString('base64').replace(/=+$/, '');
    // Character i holds bits [6i, 6i + 6): keep those inside the value's bits.
    const core = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    forms.add(core);
    forms.add(core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...forms];
}

/**
 * A line break, or one written in a JSON string: `base64` wraps its output at 76 columns,
 * `xxd -p` at 60, so an encoded value is looked for in the text without them.
 */
const LINE_BREAK = /\r?\n|\\r\\n|\\n/g;

/** Maps an offset in the text without line breaks back to the text. */
function originOf(text: string): (at: number) => number {
  // Piece i of the text between breaks starts at unwrapped offset starts[i], original origins[i].
  const starts = [0];
  const origins = [0];
  let removed = 0;
  for (const match of text.matchAll(LINE_BREAK)) {
    removed += match[0].length;
    starts.push(match.index + match[0].length - removed);
    origins.push(match.index + match[0].length);
  }
  return (at) => {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (starts[mid]! <= at) low = mid;
      else high = mid - 1;
    }
    return origins[low]! + (at - starts[low]!);
  };
}

function precededByOddBackslashes(text: string, at: number): boolean {
  let count = 0;
  while (at - count - 1 >= 0 && text[at - count - 1] === '\\') count++;
  return count % 2 === 1;
}

/**
 * Overlapping findings become one, named by the most telling of them; each span grows to
 * whole escape sequences, so cutting it out of a JSON line leaves valid JSON.
 */
function merge(found: Array<SecretFinding & { rank: number }>): SecretFinding[] {
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Array<SecretFinding & { rank: number }> = [];
  for (const finding of found) {
    const last = merged.at(-1);
    if (last && finding.start < last.end) {
      if (finding.rank < last.rank) {
        last.rule = finding.rule;
        last.rank = finding.rank;
      }
      last.end = Math.max(last.end, finding.end);
    } else {
      merged.push({ ...finding });
    }
  }
  return merged.map(({ rule, start, end }) => ({ rule, start, end }));
}

/** Grows [start, end) of `text` so that it cuts no backslash escape (`\"`, `\\`, `\u00e9`) in two. */
export function widenToEscapes(text: string, start: number, end: number): [number, number] {
  // A span that starts on an escaped character takes its backslash too.
  if (precededByOddBackslashes(text, start)) start--;
  else {
    const unicode = /\\u[0-9a-fA-F]{0,3}$/.exec(text.slice(Math.max(0, start - 5), start));
    if (unicode && precededByOddBackslashes(text, start - unicode[0].length + 1)) start -= unicode[0].length;
  }
  // A span that ends on an escaping backslash takes what it escapes.
  const tail = /\\u[0-9a-fA-F]{0,3}$/.exec(text.slice(Math.max(0, end - 5), end));
  if (tail && precededByOddBackslashes(text, end - tail[0].length + 1)) end = Math.min(text.length, end - tail[0].length + 6);
  else if (precededByOddBackslashes(text, end)) end = Math.min(text.length, end + 1);
  return [start, end];
}
