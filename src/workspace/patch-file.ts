import { closeSync, fstatSync, openSync, readSync, renameSync, rmSync, writeSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { git, gitSync } from '../git/git.js';
import { redactPatchText, scanPatchText, type SecretValue } from '../text/redact.js';
import type { SecretFinding } from '../text/find-secrets.js';

// A patch is the agent's work: it must never be left cut short, and its size must not
// decide corral's memory. git writes it straight into a file of its own (`--output`), a
// temp name beside the target; corral then reads that file a window at a time for
// secrets, and only a complete, checked file is renamed to the name users look for.

/** Where a patch is made from: the snapshot's index (or any index) compared with the base. */
export interface PatchSource {
  cwd: string;
  /** GIT_INDEX_FILE and GIT_DIR of the snapshot, at least. */
  env: Record<string, string>;
  baseCommit: string;
}

/** A patch on disk, and the secrets its added lines held (redacted in it); empty when none. */
export interface WrittenPatch {
  file: string;
  secretsAdded: string[];
}

/** The bytes read at a time, and how much of one window is read again with the next, so a secret across the cut is still whole in one. */
const WINDOW_BYTES = 4 << 20;
const OVERLAP_BYTES = 64 << 10;

function diffArgs(baseCommit: string, output: string): string[] {
  return ['diff-index', '--cached', '--patch', '--binary', '--full-index', '--no-ext-diff', '--no-textconv', '--no-color', `--output=${output}`, baseCommit];
}

function tempNameOf(file: string): string {
  return `${file}.${process.pid}.partial`;
}

/** Writes the patch of `source` to `file`: complete or not at all. `empty`: nothing changed, no git needed. */
export async function writePatch(source: PatchSource, file: string, secrets: SecretValue[], options: { empty?: boolean } = {}): Promise<WrittenPatch> {
  const temp = tempNameOf(file);
  try {
    if (options.empty) await writeFile(temp, '');
    else await git(source.cwd, diffArgs(source.baseCommit, temp), { env: source.env });
    const secretsAdded = redactPatchFileSync(temp, secrets);
    await rename(temp, file);
    return { file, secretsAdded };
  } catch (error) {
    await rm(temp, { force: true });
    await rm(`${temp}.redacted`, { force: true });
    throw error;
  }
}

/** The same, synchronously, for a process on its way out (a second Ctrl-C). */
export function writePatchSync(source: PatchSource, file: string, secrets: SecretValue[]): WrittenPatch {
  const temp = tempNameOf(file);
  try {
    gitSync(source.cwd, diffArgs(source.baseCommit, temp), { env: source.env });
    const secretsAdded = redactPatchFileSync(temp, secrets);
    renameSync(temp, file);
    return { file, secretsAdded };
  } catch (error) {
    rmSync(temp, { force: true });
    rmSync(`${temp}.redacted`, { force: true });
    throw error;
  }
}

/**
 * Finds the secrets the patch in `file` adds, a window at a time; when there are any,
 * rewrites the file with them (and every value of corral's variables) redacted. Returns
 * what was found, once each.
 */
export function redactPatchFileSync(file: string, secrets: SecretValue[]): string[] {
  const added = new Set<string>();
  walkPatch(file, secrets, false, (_text, scan) => {
    for (const finding of scan) added.add(finding.rule);
  });
  if (added.size === 0) return [];
  const redacted = `${file}.redacted`;
  const out = openSync(redacted, 'w', 0o600);
  try {
    walkPatch(file, secrets, true, (text, _added, all) => {
      writeSync(out, Buffer.from(redactPatchText(text, all), 'latin1'));
    });
  } finally {
    closeSync(out);
  }
  renameSync(redacted, file);
  return [...added];
}

/**
 * Reads the patch in windows that start and end at line starts, each scanned with the
 * tail of the one before it; hands on each stretch once, with the findings inside it.
 */
function walkPatch(file: string, secrets: SecretValue[], valuesAlways: boolean, onStretch: (text: string, added: SecretFinding[], all: SecretFinding[]) => void): void {
  const fd = openSync(file, 'r');
  try {
    // No larger than the file (and one byte to see its end): most patches are a few
    // kilobytes, and a window of zeroes made for each would cost more than reading them.
    const chunk = Buffer.allocUnsafe(Math.min(WINDOW_BYTES, fstatSync(fd).size + 1));
    let carry = Buffer.alloc(0);
    let inHunk = false;
    let ended = false;
    while (!ended) {
      const read = readSync(fd, chunk, 0, chunk.length, null);
      ended = read === 0;
      const joined = carry.length === 0 ? chunk.subarray(0, read) : Buffer.concat([carry, chunk.subarray(0, read)]);
      let window = joined;
      let rest = Buffer.alloc(0);
      if (!ended) {
        const cut = joined.lastIndexOf(0x0a) + 1;
        // A line longer than a window is cut where the window ends.
        if (cut > 0) {
          rest = Buffer.from(joined.subarray(cut));
          window = joined.subarray(0, cut);
        }
      }
      // A window with no added line (a binary patch's base85, a deletion) holds no secret a
      // change adds: read as bytes only, never as text, so a large binary change costs nothing.
      if (!valuesAlways && !hasAddedLine(window)) {
        inHunk = hunkStateAfter(window, inHunk);
        carry = rest;
        continue;
      }
      const text = window.toString('latin1');
      const scan = scanPatchText(text, secrets, inHunk, { valuesAlways });
      // What is handed on now: all of it at the end, else up to the line start before the overlap.
      let upTo = text.length;
      if (!ended && text.length > OVERLAP_BYTES) {
        upTo = text.lastIndexOf('\n', text.length - OVERLAP_BYTES) + 1;
        // A finding across that point is handed on whole with the next window.
        for (const finding of scan.all) {
          if (finding.start < upTo && finding.end > upTo) upTo = text.lastIndexOf('\n', finding.start) + 1;
        }
      } else if (!ended) {
        upTo = 0;
      }
      // Never stuck: a stretch that cannot be cut goes on whole.
      if (upTo === 0 && !ended && text.length >= WINDOW_BYTES) upTo = text.length;
      if (upTo > 0) {
        const inside = (finding: SecretFinding) => finding.end <= upTo;
        onStretch(text.slice(0, upTo), scan.added.filter(inside), scan.all.filter(inside));
        inHunk = scan.inHunkAt(upTo);
      }
      carry = Buffer.concat([window.subarray(upTo), rest]);
    }
  } finally {
    closeSync(fd);
  }
}

/** Whether a line of `window` starts with `+` (a line the change adds, if inside a hunk). */
function hasAddedLine(window: Buffer): boolean {
  return window[0] === 0x2b || window.indexOf('\n+', 0, 'latin1') !== -1;
}

/**
 * Whether the line after `window` (whole lines, none added) is read inside a hunk: the
 * last line that opens a hunk (`@@`) or ends one (anything but ' ', '-', '\\' or nothing)
 * decides; with neither, the state it started in holds.
 */
function hunkStateAfter(window: Buffer, inHunk: boolean): boolean {
  let end = window.length;
  while (end > 0) {
    // (A negative offset would count from the buffer's end.)
    const start = end < 2 ? 0 : window.lastIndexOf(0x0a, end - 2) + 1;
    const first = start < end - 1 ? window[start] : undefined;
    if (first === 0x40 && window[start + 1] === 0x40) return true;
    if (first !== undefined && first !== 0x20 && first !== 0x2d && first !== 0x5c) return false;
    if (start === 0) break;
    end = start;
  }
  return inHunk;
}
