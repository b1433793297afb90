import type { Change } from '../trace/records.js';
import { rmSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { git, gitBytes, gitPaths } from '../git/git.js';
import type { Worktree } from './worktree.js';
import { trackLeftover } from '../proc/leftovers.js';
import { scratchTempPrefix } from '../proc/owner.js';


/** One path that differs between the base commit and the worktree as it is now. */

/**
 * A snapshot of the worktree (tracked, untracked and committed changes alike) staged into
 * a private index that starts from the base commit's tree, so listing changes, the patch
 * and the result commit all see the same tree, and nothing in the worktree's own git files
 * (its index and the skip-worktree or assume-unchanged bits in it, its `.git` pointer, its
 * ignore files) decides what is seen.
 */
export interface Snapshot {
  worktree: Worktree;
  /** The private index, and the host's git directory named outright (not found through the worktree's `.git` file). */
  env: { GIT_INDEX_FILE: string; GIT_DIR: string };
  /**
   * Whether the snapshot staged anything. When not, its index is still the one it began
   * from, the base's own (its checkout's, or the base's tree): no change to list.
   */
  staged: boolean;
  dispose(): Promise<void>;
}

export async function snapshotWorktree(worktree: Worktree): Promise<Snapshot> {
  // Named after this process, so the next run or `corral clean` removes it if a kill leaves it.
  const tempDir = await mkdtemp(path.join(tmpdir(), scratchTempPrefix('index')));
  // Like the worktree: gone even when a second Ctrl-C ends the process mid-snapshot.
  const forget = trackLeftover(() => rmSync(tempDir, { recursive: true, force: true }));
  const dispose = () => rm(tempDir, { recursive: true, force: true }).finally(forget);
  try {
    const indexFile = path.join(tempDir, 'index');
    const host = await gitPaths(worktree.repo);
    const env = { GIT_INDEX_FILE: indexFile, GIT_DIR: host.commonDir };
    // GIT_ATTR_SOURCE (git 2.40 and later; older ones ignore it): attributes from the base's
    // tree too, so a `.gitattributes` the agent wrote converts nothing it stages.
    const inWorktree = { ...env, GIT_WORK_TREE: worktree.dir, GIT_ATTR_SOURCE: worktree.baseCommit };
    if (worktree.baseIndex !== undefined) {
      // The index of the base's checkout, kept since before the agent ran: git's stat cache,
      // so large repositories hash only what changed. It keeps its mtime: git trusts an
      // entry's stat (to the second) only when the entry is older than the index file, so a
      // copy stamped now would hide a same-size edit made in the second of the checkout.
      await writeFile(indexFile, worktree.baseIndex.bytes, { mode: 0o600 });
      // Rounded down, never later than the original: an older index only makes git check more.
      const mtime = new Date(Math.floor(worktree.baseIndex.mtimeMs));
      await utimes(indexFile, mtime, mtime);
    } else {
      // No checkout index to start from: the base's tree, and git hashes every file.
      await git(worktree.dir, ['read-tree', worktree.baseCommit], { env });
    }
    const rules = path.join(tempDir, 'exclude');
    await writeFile(rules, await baseIgnoreRules(worktree.dir, env, host.commonDir, worktree.baseCommit));
    // In one walk: tracked files that differ from the base (edits, deletions, modes) and the
    // files the base's own ignore rules do not ignore (a `.gitignore` the agent wrote or
    // changed hides nothing); then only those are staged, none when nothing changed.
    // The names go back to git in git's own quoting (one a line, C-quoted when they hold a
    // newline, a quote or a byte that is not ASCII): a name that is not UTF-8 read as text
    // would come back changed and match no file, and the whole snapshot would fail.
    const listed = await git(worktree.dir, ['-c', 'core.quotePath=true', 'ls-files', '--others', '--modified', '--deleted', `--exclude-from=${rules}`], { env: inWorktree });
    const paths = [...new Set(listed.stdout.split('\n').filter((name) => name !== ''))];
    if (paths.length > 0) {
      await git(worktree.dir, ['add', '--all', '--force', '--pathspec-from-file=-'], {
        env: { ...inWorktree, GIT_LITERAL_PATHSPECS: '1' },
        input: `${paths.join('\n')}\n`,
      });
    }
    return { worktree, env, staged: paths.length > 0, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * The ignore rules of the base commit as one exclude file for `--exclude-from`: the host's
 * `info/exclude`, then every `.gitignore` of the base's tree, each pattern anchored to its
 * folder, parents before children, so git's own matching gives the answer the files would
 * give in their folders (the last match wins, a deeper file beats a shallower one).
 */
async function baseIgnoreRules(cwd: string, env: Record<string, string>, commonDir: string, baseCommit: string): Promise<string> {
  const [exclude, gitignores] = await Promise.all([readFile(path.join(commonDir, 'info', 'exclude'), 'utf8').catch(() => ''), baseGitignores(cwd, env, commonDir, baseCommit)]);
  return `${[exclude, ...gitignores].join('\n')}\n`;
}

/**
 * The `.gitignore` files of a commit never change: the tickets of a batch on one base
 * read them (two git processes) once, not each. A failed read is not kept.
 */
const gitignoresByBase = new Map<string, Promise<string[]>>();

function baseGitignores(cwd: string, env: Record<string, string>, commonDir: string, baseCommit: string): Promise<string[]> {
  const key = `${commonDir}\0${baseCommit}`;
  let known = gitignoresByBase.get(key);
  if (known === undefined) {
    known = readGitignores(cwd, env);
    gitignoresByBase.set(key, known);
    known.catch(() => gitignoresByBase.delete(key));
  }
  return known;
}

/** Every `.gitignore` of the tree in the index `env` names, anchored to its folder, parents first. */
async function readGitignores(cwd: string, env: Record<string, string>): Promise<string[]> {
  // The private index holds the base's tree at this point.
  const listing = await git(cwd, ['ls-files', '--stage', '-z', '--', ':(glob)**/.gitignore'], { env });
  const files: { dir: string; oid: string }[] = [];
  for (const entry of listing.stdout.split('\0')) {
    const match = /^(\d+) ([0-9a-f]+) 0\t(.*)$/s.exec(entry);
    // git reads no `.gitignore` through a symbolic link.
    if (match === null || match[1] === '120000') continue;
    files.push({ dir: path.posix.dirname(match[3]!), oid: match[2]! });
  }
  const parts: string[] = [];
  if (files.length > 0) {
    const blobs = await readBlobs(cwd, env, files.map((file) => file.oid));
    const ordered = files.map((file, i) => ({ dir: file.dir === '.' ? '' : file.dir, text: blobs[i] ?? '' }));
    ordered.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0));
    for (const file of ordered) parts.push(anchorIgnorePatterns(file.dir, file.text));
  }
  return parts;
}

/** The contents of blobs, in order, from one `git cat-file --batch`. */
async function readBlobs(cwd: string, env: Record<string, string>, oids: string[]): Promise<string[]> {
  const out = await gitBytes(cwd, ['cat-file', '--batch'], { env, input: `${oids.join('\n')}\n` });
  const blobs: string[] = [];
  let at = 0;
  while (at < out.length) {
    const headerEnd = out.indexOf(0x0a, at);
    if (headerEnd === -1) break;
    const size = Number(/ (\d+)$/.exec(out.toString('utf8', at, headerEnd))?.[1] ?? 0);
    blobs.push(out.toString('utf8', headerEnd + 1, headerEnd + 1 + size));
    at = headerEnd + 1 + size + 1;
  }
  return blobs;
}

/**
 * The patterns of the `.gitignore` in `dir` (repository-relative, '' for the top) written
 * relative to the top: a pattern with a slash before its end is anchored to `dir`, one
 * without matches at any depth below it. Exported for tests.
 */
export function anchorIgnorePatterns(dir: string, text: string): string {
  // git skips a UTF-8 byte order mark at the start of the file.
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (dir === '') return body;
  // A folder name no pattern can spell: its rules are left out, so more is seen, not less.
  if (dir.includes('\n')) return '';
  const prefix = dir.replace(/[\\*?[]/g, (c) => `\\${c}`).replace(/^[#!]/, (c) => `\\${c}`);
  const lines: string[] = [];
  for (const line of body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const negated = line.startsWith('!');
    const pattern = negated ? line.slice(1) : line;
    const bang = negated ? '!' : '';
    // git drops unescaped trailing spaces before it looks for a slash.
    const trimmed = pattern.replace(/(?<!\\)[ ]+$/, '');
    const slash = trimmed.indexOf('/');
    if (slash === 0) lines.push(`${bang}${prefix}${pattern}`);
    else if (slash !== -1 && slash < trimmed.length - 1) lines.push(`${bang}${prefix}/${pattern}`);
    else lines.push(`${bang}${prefix}/**/${pattern}`);
  }
  return lines.join('\n');
}

/** Every change of the snapshot against the base commit. */
export async function listChanges(snapshot: Snapshot): Promise<Change[]> {
  // An index that is the base's own differs from the base in nothing: no git process to say so.
  if (!snapshot.staged) return [];
  const { stdout } = await git(
    snapshot.worktree.dir,
    ['diff-index', '--cached', '--raw', '-z', '-M', '--no-ext-diff', '--no-textconv', snapshot.worktree.baseCommit],
    { env: snapshot.env },
  );
  return parseRawDiff(stdout);
}

/** Parses `git diff --raw -z` output. Exported for tests. */
export function parseRawDiff(raw: string): Change[] {
  const fields = raw.split('\0');
  const changes: Change[] = [];
  for (let i = 0; i < fields.length; ) {
    const header = fields[i++];
    if (!header) continue;
    const [oldMode, newMode, oldSha, newSha, status = ''] = header.slice(1).split(' ');
    const letter = status[0];
    if (letter === 'R' || letter === 'C') {
      const from = fields[i++] ?? '';
      const to = fields[i++] ?? '';
      changes.push(letter === 'R' ? { kind: 'renamed', path: to, from } : { kind: 'added', path: to });
      continue;
    }
    const file = fields[i++] ?? '';
    if (letter === 'A') changes.push({ kind: 'added', path: file });
    else if (letter === 'D') changes.push({ kind: 'deleted', path: file });
    else if (letter === 'T') changes.push({ kind: 'type', path: file });
    else if (oldSha === newSha && oldMode !== newMode) changes.push({ kind: 'mode', path: file });
    else changes.push({ kind: 'modified', path: file });
  }
  return changes;
}

/**
 * Files the agent wrote inside a submodule's path. A worktree never checks a submodule out
 * (its path is an empty folder), and git sees no change below a gitlink, so these writes
 * are in no listing, no patch and no commit of this repository: each is returned as an
 * added path for the fence to judge and the summary to name. A `.git` at the submodule's
 * top is git's, not the agent's work.
 */
export async function listSubmoduleWrites(snapshot: Snapshot, changes: Change[], limit = 1000): Promise<{ submodule: string; change: Change }[]> {
  // A repository with submodules has a .gitmodules: without one (the usual case) no tree is listed.
  const declared = await stat(path.join(snapshot.worktree.dir, '.gitmodules')).then(() => true, () => false);
  if (!declared && !changes.some((change) => change.path === '.gitmodules' || change.from === '.gitmodules')) return [];
  const { stdout } = await git(snapshot.worktree.dir, ['ls-tree', '-r', '-z', '--full-tree', snapshot.worktree.baseCommit], { env: snapshot.env });
  const submodules = stdout
    .split('\0')
    .filter((entry) => entry.startsWith('160000 '))
    .map((entry) => entry.slice(entry.indexOf('\t') + 1));
  const writes: { submodule: string; change: Change }[] = [];
  for (const submodule of submodules) {
    const top = path.join(snapshot.worktree.dir, submodule);
    const entries = await readdir(top, { recursive: true, withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory()) continue;
      // parentPath from Node 20.12 on; `path` before it.
      const folder = (entry as { parentPath?: string; path?: string }).parentPath ?? (entry as { path?: string }).path ?? top;
      const inside = path.relative(top, path.join(folder, entry.name));
      if (inside === '.git' || inside.startsWith(`.git${path.sep}`)) continue;
      writes.push({ submodule, change: { kind: 'added', path: `${submodule}/${inside.split(path.sep).join('/')}` } });
      if (writes.length >= limit) return writes;
    }
  }
  return writes;
}
