import path from 'node:path';
import { git, gitBytes } from '../git/git.js';

// The repository's own instructions for agents, read as the agents that defined them
// read them: AGENTS.md as Codex does (from the root down to the folders in play, at most
// one file a folder, AGENTS.override.md before AGENTS.md, root first so the nearer file
// speaks last), and Claude Code's CLAUDE.md and .claude/CLAUDE.md. They are read from
// the base commit, which is what the worktree holds, never from the host's working tree.

/** Codex's default `project_doc_max_bytes`: the instructions together stay under it. */
export const INSTRUCTIONS_MAX_BYTES = 32 * 1024;

const AGENTS_NAMES = ['AGENTS.override.md', 'AGENTS.md'] as const;
const CLAUDE_FILES = ['CLAUDE.md', '.claude/CLAUDE.md'] as const;
/** Characters that make a glob segment a pattern rather than a folder name. */
const GLOB_CHARS = /[*?[\]{}!()]/;

export interface InstructionFile {
  /** Repository-relative, with `/`. */
  path: string;
  /** The text as given to the model (cut when `cut`). */
  text: string;
  /** The whole file's size. */
  bytes: number;
  /** Only its start fitted under the bound. */
  cut: boolean;
}

export interface Instructions {
  files: InstructionFile[];
  /** Files found but left out whole: the bound was reached before them. */
  omitted: string[];
}

/**
 * The folders whose instructions apply to the files in play: the root, and every folder
 * on the way to the literal start of each allow glob (`src/api/**` → src, src/api; a
 * plain file's folder for `notes/guide.md`), shallow first.
 */
export function instructionDirs(allow: readonly string[]): string[] {
  const dirs = new Set<string>(['']);
  for (const glob of allow) {
    const segments = glob.split('/').filter((segment) => segment !== '' && segment !== '.');
    const literal: string[] = [];
    for (const segment of segments) {
      if (GLOB_CHARS.test(segment) || segment === '..') break;
      literal.push(segment);
    }
    // Without a pattern in it, the last segment names a file.
    if (literal.length === segments.length) literal.pop();
    for (let depth = 1; depth <= literal.length; depth++) dirs.add(literal.slice(0, depth).join('/'));
  }
  return [...dirs].sort((a, b) => depthOf(a) - depthOf(b) || a.localeCompare(b));
}

function depthOf(dir: string): number {
  return dir === '' ? 0 : dir.split('/').length;
}

export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
}

const INSTRUCTION_NAMES: ReadonlySet<string> = new Set([...AGENTS_NAMES, 'CLAUDE.md']);

/** Whether a file of this repository-relative path could be an instruction file: what a listing of a whole tree keeps for {@link loadInstructions}. */
export function isInstructionFileName(file: string): boolean {
  return INSTRUCTION_NAMES.has(file.slice(file.lastIndexOf('/') + 1));
}

export interface LoadInstructionsOptions {
  /** The bound on the instructions together. */
  maxBytes?: number;
  /**
   * Every entry of `commit` whose path passes {@link isInstructionFileName}, from a listing
   * of the whole tree already made (the disk-space preflight's): the files are then found
   * without starting git, which costs the first model request a process.
   */
  listed?: ReadonlyMap<string, TreeEntry>;
}

/** The instruction files of `commit` for these allow globs, in the order the model reads them, within the bound. */
export async function loadInstructions(repo: string, commit: string, allow: readonly string[], options: LoadInstructionsOptions = {}): Promise<Instructions> {
  const { maxBytes = INSTRUCTIONS_MAX_BYTES, listed } = options;
  const dirs = instructionDirs(allow);
  const join = (dir: string, name: string): string => (dir === '' ? name : `${dir}/${name}`);
  const candidates = [...dirs.flatMap((dir) => AGENTS_NAMES.map((name) => join(dir, name))), ...CLAUDE_FILES];
  const entries = await listEntries(repo, commit, candidates, listed);
  // A symbolic link (CLAUDE.md → AGENTS.md is common) is followed once, inside the repository.
  const links = [...entries].filter(([, entry]) => entry.mode === '120000');
  const linkTexts = await readBlobs(repo, links.map(([, entry]) => entry.oid));
  const targets = new Map<string, string>();
  links.forEach(([file], index) => {
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), linkTexts[index]!.toString('utf8').trim()));
    if (!target.startsWith('../') && target !== '..' && !path.posix.isAbsolute(target)) targets.set(file, target);
  });
  const targetEntries = await listEntries(repo, commit, [...new Set(targets.values())], listed);
  const blobOf = (file: string): string | undefined => {
    const entry = entries.get(file);
    if (entry === undefined) return undefined;
    const resolved = entry.mode === '120000' ? targetEntries.get(targets.get(file) ?? '') : entry;
    return resolved !== undefined && resolved.type === 'blob' && resolved.mode !== '120000' && resolved.mode !== '160000' ? resolved.oid : undefined;
  };

  const chosen: { path: string; oid: string }[] = [];
  const seen = new Set<string>();
  const pick = (file: string): boolean => {
    const oid = blobOf(file);
    if (oid === undefined || seen.has(oid)) return false;
    seen.add(oid);
    chosen.push({ path: file, oid });
    return true;
  };
  // The root's AGENTS.md, then CLAUDE.md, then the nested AGENTS.md nearer the code.
  const perDir = (dir: string): void => void AGENTS_NAMES.some((name) => pick(join(dir, name)));
  perDir('');
  for (const file of CLAUDE_FILES) pick(file);
  for (const dir of dirs.slice(1)) perDir(dir);

  const texts = await readBlobs(repo, chosen.map((file) => file.oid));
  const instructions: Instructions = { files: [], omitted: [] };
  let room = maxBytes;
  chosen.forEach((file, index) => {
    const bytes = texts[index]!;
    // As Codex: an empty file is skipped.
    if (bytes.toString('utf8').trim() === '') return;
    if (room <= 0) {
      instructions.omitted.push(file.path);
      return;
    }
    const cut = bytes.length > room;
    const text = cut ? utf8Prefix(bytes, room) : bytes.toString('utf8');
    instructions.files.push({ path: file.path, text, bytes: bytes.length, cut });
    room -= cut ? room : bytes.length;
  });
  return instructions;
}

/** The entries of these paths in `commit`; a path that is not there is left out. */
async function listEntries(repo: string, commit: string, paths: string[], listed?: ReadonlyMap<string, TreeEntry>): Promise<Map<string, TreeEntry>> {
  const entries = new Map<string, TreeEntry>();
  // The listing holds every path of an instruction file's name; another (a link's target) needs git.
  const unlisted = listed === undefined ? paths : paths.filter((file) => !isInstructionFileName(file));
  for (const file of listed === undefined ? [] : paths) {
    const entry = listed!.get(file);
    if (entry !== undefined) entries.set(file, entry);
  }
  if (unlisted.length === 0) return entries;
  const { stdout } = await git(repo, ['ls-tree', '-z', commit, '--', ...unlisted], { env: { GIT_LITERAL_PATHSPECS: '1' } });
  for (const record of stdout.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const [mode, type, oid] = record.slice(0, tab).split(' ');
    if (mode !== undefined && type !== undefined && oid !== undefined) entries.set(record.slice(tab + 1), { mode, type, oid });
  }
  return entries;
}

/** The contents of these blobs, in order, in one git process. */
async function readBlobs(repo: string, oids: string[]): Promise<Buffer[]> {
  if (oids.length === 0) return [];
  const out = await gitBytes(repo, ['cat-file', '--batch'], { input: `${oids.join('\n')}\n` });
  const blobs: Buffer[] = [];
  let at = 0;
  for (let i = 0; i < oids.length; i++) {
    const end = out.indexOf(0x0a, at);
    const header = out.subarray(at, end).toString('utf8').split(' ');
    const size = Number(header[2]);
    if (header[1] === 'missing' || !Number.isSafeInteger(size)) {
      blobs.push(Buffer.alloc(0));
      at = end + 1;
      continue;
    }
    blobs.push(out.subarray(end + 1, end + 1 + size));
    at = end + 1 + size + 1;
  }
  return blobs;
}

/** At most `max` bytes of `bytes` as text, never ending inside a character. */
function utf8Prefix(bytes: Buffer, max: number): string {
  let end = Math.min(max, bytes.length);
  // A continuation byte (10xxxxxx) means the character started before `end`.
  while (end > 0 && end < bytes.length && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
