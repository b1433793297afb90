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
  const find = createSecretFinder(secrets, { bytes: true });
  const added = addedLines(text);
  const inAdded = find(added.text).map((finding) => ({ ...finding, start: added.origin(finding.start), end: added.origin(finding.end - 1) + 1 }));
  if (inAdded.length === 0) return undefined;
  // Values of corral's variables go wherever they are, as the patch is a file users share.
  const byValue = find(text).filter((finding) => secrets.some(({ name }) => finding.rule === name || finding.rule.startsWith(`${name} as `)));
  const findings = [...inAdded, ...byValue].sort((a, b) => a.start - b.start || b.end - a.end);
  const disjoint: SecretFinding[] = [];
  for (const finding of findings) {
    const last = disjoint.at(-1);
    if (last && finding.start < last.end) last.end = Math.max(last.end, finding.end);
    else disjoint.push({ ...finding });
  }
  return { added: [...new Set(inAdded.map((finding) => finding.rule))], redacted: Buffer.from(redactFindings(text, disjoint), 'latin1') };
}

/** The added lines of a patch's hunks, without their `+`, joined by newlines. */
function addedLines(patch: string): { text: string; origin: (at: number) => number } {
  const lines: Array<{ at: number; text: string }> = [];
  let inHunk = false;
  let at = 0;
  for (const line of patch.split('\n')) {
    if (line.startsWith('@@')) inHunk = true;
    else if (inHunk && line.startsWith('+')) lines.push({ at: at + 1, text: line.slice(1) });
    // Inside a hunk every line starts with ' ', '-', '+' or '\'; anything else ends it.
    else if (!(inHunk && (line.startsWith(' ') || line.startsWith('-') || line.startsWith('\\') || line === ''))) inHunk = false;
    at += line.length + 1;
  }
  const starts: number[] = [];
  let length = 0;
  for (const line of lines) {
    starts.push(length);
    length += line.text.length + 1;
  }
  return {
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
  };
}
