// Secrets never reach a trace, a JSON report, a summary or a kept patch. Two nets, both in
// find-secrets.ts: the values of the host's own secret-named variables (whatever their shape,
// and encoded as base64 or hex), and strings shaped like well-known credentials.
import { createSecretFinder, findSecretShapes, widenToEscapes, type SecretFinding, type SecretValue } from './find-secrets.js';

export type { SecretValue } from './find-secrets.js';

/** Names of variables that hold credentials by convention. */
export const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

/** A value shorter than this is too likely to occur by chance to be redacted by value. */
const MIN_SECRET_LENGTH = 8;

/** The secret-named variables of an environment, to be found and redacted by value. */
export function secretValues(env: NodeJS.ProcessEnv): SecretValue[] {
  return Object.entries(env)
    .filter((entry): entry is [string, string] => SECRET_NAME.test(entry[0]) && (entry[1]?.length ?? 0) >= MIN_SECRET_LENGTH)
    .map(([name, value]) => ({ name, value }));
}

export type Redactor = (text: string) => string;

export function createRedactor(secrets: SecretValue[]): Redactor {
  const find = secrets.length > 0 ? createSecretFinder(secrets) : findSecretShapes;
  return (text) => redactFindings(text, find(text));
}

/** Shape-only redaction, for text with no environment at hand. */
export const redactSecrets: Redactor = createRedactor([]);

/** Redacts every string inside a JSON-able value. */
export function redactValue<T>(value: T, redact: Redactor = redactSecrets): T {
  return JSON.parse(redact(JSON.stringify(value))) as T;
}

/** Each finding replaced by `[REDACTED <rule>]`. */
function redactFindings(text: string, findings: SecretFinding[]): string {
  if (findings.length === 0) return text;
  const out: string[] = [];
  let from = 0;
  for (const finding of findings) {
    const [start, end] = widenToEscapes(text, Math.max(finding.start, from), finding.end);
    out.push(text.slice(from, Math.max(from, start)), `[REDACTED ${finding.rule}]`);
    from = Math.max(from, end);
  }
  out.push(text.slice(from));
  return out.join('');
}

export interface PatchSecrets {
  /** What the lines the change adds hold: variables' names and shapes' rules, once each. */
  added: string[];
  /** The patch with those secrets (and every value of a secret variable) redacted. */
  redacted: Buffer;
}

/**
 * The secrets that a change adds, read from its patch (a `git diff`): only added lines count,
 * since a removed line or a line of context is already in the repository. Added lines are
 * read together, so a key or an encoded value spread over several lines is still found.
 * Undefined when the change adds none.
 */
export function findAddedSecrets(patch: Buffer, secrets: SecretValue[]): PatchSecrets | undefined {
  const text = patch.toString('latin1');
  const scan = scanPatchText(text, secrets);
  if (scan.added.length === 0) return undefined;
  return { added: [...new Set(scan.added.map((finding) => finding.rule))], redacted: Buffer.from(redactFindings(text, scan.all), 'latin1') };
}

/** The secrets of one stretch of a patch, read as latin1 (a byte a character). */
export interface PatchScan {
  /** Found in the lines the change adds. */
  added: SecretFinding[];
  /** What a redaction of the stretch covers, in order and disjoint: the added ones and every value of corral's variables. */
  all: SecretFinding[];
  /** Whether the line starting at `offset` is read as inside a hunk. */
  inHunkAt(offset: number): boolean;
}

/**
 * Scans a stretch of a patch that starts at a line start, `startsInHunk` saying whether
 * that line is inside a hunk: a long patch is read a window at a time, never whole.
 * `valuesAlways`: the values of corral's variables are in `all` even in a stretch that
 * adds no secret (the patch as a whole does, so it is redacted throughout).
 */
export function scanPatchText(text: string, secrets: SecretValue[], startsInHunk = false, options: { valuesAlways?: boolean } = {}): PatchScan {
  const find = createSecretFinder(secrets, { bytes: true });
  const added = addedLines(text, startsInHunk);
  const inAdded = added.lines.length === 0 ? [] : find(added.text).map((finding) => ({ ...finding, start: added.origin(finding.start), end: added.origin(finding.end - 1) + 1 }));
  // Values of corral's variables go wherever they are, as the patch is a file users share.
  const byValue = inAdded.length === 0 && !options.valuesAlways ? [] : find(text).filter((finding) => secrets.some(({ name }) => finding.rule === name || finding.rule.startsWith(`${name} as `)));
  const findings = [...inAdded, ...byValue].sort((a, b) => a.start - b.start || b.end - a.end);
  const disjoint: SecretFinding[] = [];
  for (const finding of findings) {
    const last = disjoint.at(-1);
    if (last && finding.start < last.end) last.end = Math.max(last.end, finding.end);
    else disjoint.push({ ...finding });
  }
  return { added: inAdded, all: disjoint, inHunkAt: added.inHunkAt };
}

/** Each finding of `findings` (in order, disjoint) replaced by `[REDACTED <rule>]`. */
export function redactPatchText(text: string, findings: SecretFinding[]): string {
  return redactFindings(text, findings);
}

/** The added lines of a patch's hunks, without their `+`, joined by newlines. */
function addedLines(patch: string, startsInHunk: boolean): { lines: unknown[]; text: string; origin: (at: number) => number; inHunkAt: (offset: number) => boolean } {
  const lines: Array<{ at: number; text: string }> = [];
  // The state each line starts in, where it changes: [line start, in a hunk], in order.
  const changes: Array<[number, boolean]> = [[0, startsInHunk]];
  let inHunk = startsInHunk;
  let at = 0;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) lines.push({ at: at + 1, text: line.slice(1) });
    // Inside a hunk every line starts with ' ', '-', '+' or '\\'; anything else ends it.
    else if (!(inHunk && (line.startsWith(' ') || line.startsWith('-') || line.startsWith('\\') || line === ''))) inHunk = false;
    at += line.length + 1;
    if (inHunk !== changes.at(-1)![1]) changes.push([at, inHunk]);
  }
  const starts: number[] = [];
  let length = 0;
  for (const line of lines) {
    starts.push(length);
    length += line.text.length + 1;
  }
  return {
    lines,
    text: lines.map((line) => line.text).join('\n'),
    origin(offset) {
      let low = 0;
      let high = starts.length - 1;
      while (low < high) {
        const mid = (low + high + 1) >> 1;
        if (starts[mid]! <= offset) low = mid;
        else high = mid - 1;
      }
      return lines[low]!.at + (offset - starts[low]!);
    },
    inHunkAt(offset) {
      let state = startsInHunk;
      for (const [from, value] of changes) {
        if (from > offset) break;
        state = value;
      }
      return state;
    },
  };
}
