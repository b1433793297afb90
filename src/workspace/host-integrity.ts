import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { git, gitPaths, type GitPaths } from '../git/git.js';

// The fence proves what changed in the worktree; this proves the host repository did not
// change under the run: an agent (or a program it ran) that moves HEAD or a branch, sets
// git config, plants a hook or stages something in the host is caught.

/** What of the host repository a run must leave as it found it. */
export interface HostState {
  /** Where the host's config, common and own git directories and index file are. */
  files: GitPaths;
  head: string;
  /** `refname sha` lines, the run's own `refs/heads/corral/*` left out. */
  refs: string[];
  /** The `refs/heads/corral/*` lines left out of `refs`: where runs put their results, read with the same process. */
  resultBranches: string[];
  config: string;
  /** `name mode sha256` lines of the hooks directory. */
  hooks: string[];
  /** What is staged (`git ls-files --stage -v`), not the stat cache a `git status` refreshes. */
  index: HostIndex;
  /**
   * `name digest` lines of the git files that steer what git sees or where it looks, besides
   * config and hooks: `info/*` (exclude, attributes, sparse-checkout, grafts),
   * `objects/info/alternates`, `packed-refs`, `shallow`, the per-worktree config.
   */
  gitFiles: string[];
  /**
   * The host checkout's own files that differ from its index (`git status`), as
   * `status\0path[\0stat]`: untracked and
   * changed ones with their stat (inode, size, mtime, ctime, mode: any write changes the
   * ctime), ignored ones by name only (caches and logs change on their own).
   */
  checkout: string[];
  /** Folders of the checkout left out of `checkout`: where corral itself writes during the run. */
  ownFolders: string[];
}

const RESULT_BRANCHES = 'refs/heads/corral/';

export interface HostIndex {
  /** sha256 of `git ls-files --stage -z`. */
  staged: string;
  /** sha256 of the index file the listing came from; null when it changed while being listed. */
  file: string | null;
}

/**
 * The host repository's state. `ownFolders` are folders corral writes into during the
 * run (its run records: `.corral/`, or a `--runs-dir` inside the checkout); a second call
 * for the same run takes them from `before`.
 */
export async function recordHostState(repo: string, before?: HostState, ownFolders: string[] = []): Promise<HostState> {
  const own = before?.ownFolders ?? ownFolders;
  // Where the files are does not change during a run: known from the ticket's load (or
  // asked once), not `--git-path hooks` for the hooks (the hardened git points
  // core.hooksPath at /dev/null). HEAD and the refs are git's to read (a reftable
  // repository keeps neither in files): asked at once, with the branch HEAD names
  // resolved from the listing rather than by another process. The listing marks the
  // branch HEAD is on (`%(HEAD)`), so `git symbolic-ref` runs only when it marks none: a
  // detached HEAD, or a branch with no commit yet.
  const [refs, files] = await Promise.all([git(repo, ['for-each-ref', '--format=%(HEAD)%(refname) %(objectname)']), before?.files ?? gitPaths(repo)]);
  const { config: configFile, index: indexFile, commonDir, gitDir } = files;
  const listed = refs.stdout.split('\n').filter((line) => line !== '');
  const refLines = listed.map((line) => line.slice(1));
  const current = listed.find((line) => line.startsWith('*'));
  const [config, head, index, gitFiles, checkout] = await Promise.all([
    readFile(configFile, 'utf8').catch(() => ''),
    current === undefined ? symbolicHead(repo).then((symbolic) => describeHead(repo, symbolic, refLines)) : describeHead(repo, current.slice(1, current.lastIndexOf(' ')), refLines),
    indexDigest(repo, indexFile, before?.index),
    gitFileLines(commonDir, gitDir),
    checkoutLines(repo, own),
  ]);
  return {
    files,
    ownFolders: own,
    head,
    refs: refLines.filter((line) => !line.startsWith(RESULT_BRANCHES)),
    resultBranches: refLines.filter((line) => line.startsWith(RESULT_BRANCHES)),
    config,
    // The default hooks folder and, when the repository sets one, its core.hooksPath (husky and friends).
    hooks: await hookLines(repo, configFile, config, path.join(commonDir, 'hooks')),
    index,
    gitFiles,
    checkout,
  };
}

/** The git files that change what git reads, as `name digest` lines; a missing file is no line. */
async function gitFileLines(commonDir: string, gitDir: string): Promise<string[]> {
  const infoDir = path.join(commonDir, 'info');
  const infoNames = (await readdir(infoDir).catch(() => [] as string[])).sort().map((name) => path.join('info', name));
  const names = [...infoNames, 'objects/info/alternates', 'objects/info/http-alternates', 'packed-refs', 'shallow'];
  const files = names.map((name) => ({ name, file: path.join(commonDir, name) }));
  // The host checkout's own config.worktree (read when extensions.worktreeConfig is set).
  files.push({ name: gitDir === commonDir ? 'config.worktree' : `${path.relative(commonDir, gitDir)}/config.worktree`, file: path.join(gitDir, 'config.worktree') });
  const lines = await Promise.all(files.map(async ({ name, file }) => {
    const digest = await fileDigest(file);
    return digest === null ? null : `${name} ${digest}`;
  }));
  return lines.filter((line): line is string => line !== null);
}

/** A file's content digest (a symlink by its target, a folder by its names); null when there is nothing. */
async function fileDigest(file: string): Promise<string | null> {
  const info = await lstat(file).catch(() => null);
  if (info === null) return null;
  if (info.isSymbolicLink()) return `-> ${await readlink(file).catch(() => '?')}`;
  if (info.isDirectory()) return `dir ${sha256((await readdir(file).catch(() => [] as string[])).sort().join('\0')).slice(0, 16)}`;
  return `${(info.mode & 0o777).toString(8)} ${sha256(await readFile(file).catch(() => Buffer.alloc(0))).slice(0, 16)}`;
}

/**
 * `XY path stat` lines of `git status` in the host checkout. Ignored paths are listed as
 * their patterns match them (a new folder that ignores itself with a `.gitignore` of `*`
 * still shows its files), by name only.
 */
async function checkoutLines(repo: string, ownFolders: string[]): Promise<string[]> {
  // corral's own run records (.corral/: traces, patches, its .gitignore, or the folder
  // --runs-dir names) change under every run of a batch, before a .gitignore exists too:
  // they are not the host's to check.
  const inside = ownFolders.map((folder) => path.relative(repo, folder)).filter((relative) => relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative));
  const excluded = ['.corral', ...inside].map((relative) => `:(top,exclude,literal)${relative.split(path.sep).join('/')}`);
  const { stdout } = await git(repo, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignored=matching', '--no-renames', '--', '.', ...excluded]);
  const fields = stdout.split('\0');
  const lines: string[] = [];
  for (let i = 0; i < fields.length; i += 1) {
    const field = fields[i]!;
    if (field.length < 4) continue;
    const status = field.slice(0, 2);
    const name = field.slice(3);
    if (status[0] === 'R' || status[0] === 'C') i += 1;
    if (status === '!!' || name.endsWith('/')) {
      lines.push(`${status}\0${name}`);
      continue;
    }
    const info = await lstat(path.join(repo, name), { bigint: true }).catch(() => null);
    const stamp = info === null ? 'missing' : `${info.ino} ${info.size} ${info.mtimeNs} ${info.ctimeNs} ${info.mode.toString(8)}`;
    lines.push(`${status}\0${name}\0${stamp}`);
  }
  return lines;
}

/** The branch HEAD names (`git symbolic-ref -q HEAD`); null when it is detached. */
async function symbolicHead(repo: string): Promise<string | null> {
  const symbolic = await git(repo, ['symbolic-ref', '--quiet', 'HEAD'], { allowFailure: true });
  return symbolic.exitCode === 0 ? symbolic.stdout.trim() : null;
}

/**
 * `<symbolic ref or (detached)> <commit or (no commit)>`, as `git symbolic-ref -q HEAD`
 * and `git rev-parse --verify HEAD` say: the branch's commit from the refs listed, and a
 * detached HEAD's commit asked of git (a second process only then).
 */
async function describeHead(repo: string, symbolic: string | null, refLines: string[]): Promise<string> {
  if (symbolic === null || symbolic === '') {
    const commit = await git(repo, ['rev-parse', '--verify', '--quiet', 'HEAD'], { allowFailure: true });
    return `(detached) ${commit.exitCode === 0 && commit.stdout.trim() !== '' ? commit.stdout.trim() : '(no commit)'}`;
  }
  const line = refLines.find((entry) => entry.startsWith(`${symbolic} `));
  return `${symbolic} ${line?.slice(symbolic.length + 1) || '(no commit)'}`;
}

/**
 * The digest of `git ls-files --stage -v`: what is staged, not the stat cache a `git status`
 * refreshes. With a state from before the run: when the index file holds the very bytes
 * it held then, the listing is the same (it is a function of those bytes; a split index's
 * shared part is named by its hash) and no git process is needed.
 */
async function indexDigest(repo: string, indexFile: string, before: HostIndex | undefined): Promise<HostIndex> {
  const bytes = () => readFile(indexFile).then((data) => sha256(data), () => 'none');
  const fileBefore = await bytes();
  if (before !== undefined && before.file !== null && before.file === fileBefore) return before;
  // -v: the assume-unchanged and skip-worktree bits too, which hide a file's changes from git.
  const listing = await git(repo, ['ls-files', '--stage', '-v', '-z']);
  // A file that changed while it was being listed says nothing about the listing: no shortcut next time.
  const fileAfter = await bytes();
  return { staged: sha256(listing.stdout), file: fileAfter === fileBefore ? fileBefore : null };
}

function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function hookLines(repo: string, configFile: string, config: string, defaultDir: string): Promise<string[]> {
  const configured = await configuredHooksDir(repo, configFile, config);
  const lines = await listHooks(defaultDir);
  if (configured !== null && configured !== defaultDir) lines.push(...(await listHooks(configured)).map((line) => `${path.relative(repo, configured) || '.'}/${line}`));
  return lines;
}

/** The hooks folder's entries as `name mode digest` lines; a symlink by its target, even a dangling one. */
async function listHooks(dir: string): Promise<string[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const lines: string[] = [];
  for (const name of names.sort()) {
    const file = path.join(dir, name);
    const info = await lstat(file).catch(() => null);
    if (info === null) continue;
    if (info.isSymbolicLink()) lines.push(`${name} -> ${await readlink(file).catch(() => '?')}`);
    else if (info.isFile()) lines.push(`${name} ${(info.mode & 0o777).toString(8)} ${createHash('sha256').update(await readFile(file)).digest('hex').slice(0, 16)}`);
  }
  return lines;
}

/** The repository's own `core.hooksPath` (the hardened git overrides it, so it is read from the file), resolved against the top directory. */
async function configuredHooksDir(repo: string, configFile: string, config: string): Promise<string | null> {
  // A key is never split across lines, so a file without the name cannot set it: no git
  // process is needed to know that (the usual case).
  if (!/hookspath/i.test(config)) return null;
  const r = await git(repo, ['config', '--file', configFile, '--get', 'core.hooksPath'], { allowFailure: true });
  const value = r.exitCode === 0 ? r.stdout.trim() : '';
  return value === '' ? null : path.resolve(repo, value);
}

/** The commit branch `refs/heads/<name>` (a result branch, `corral/…`) was at when `state` was read; null when there was none. */
export function resultBranchTip(state: HostState, name: string): string | null {
  const prefix = `refs/heads/${name} `;
  return state.resultBranches.find((line) => line.startsWith(prefix))?.slice(prefix.length) ?? null;
}

/** Each difference between two states, as a line a person can act on; empty when the host is as it was. */
export function hostDifferences(before: HostState, after: HostState): string[] {
  const differences: string[] = [];
  if (before.head !== after.head) differences.push(`HEAD moved: ${before.head} → ${after.head}`);
  differences.push(...listDifferences('ref', before.refs, after.refs));
  if (before.config !== after.config) {
    differences.push(...listDifferences('git config line', before.config.split('\n'), after.config.split('\n')));
  }
  differences.push(...listDifferences('hook', before.hooks, after.hooks));
  if (before.index.staged !== after.index.staged) differences.push('the host index (what is staged) changed');
  differences.push(...listDifferences('git file', before.gitFiles, after.gitFiles));
  differences.push(...checkoutDifferences(before.checkout, after.checkout));
  return differences;
}

/** One line per path of the host checkout whose status or stat differs. */
function checkoutDifferences(before: string[], after: string[]): string[] {
  const byPath = (lines: string[]) => new Map(lines.map((line) => [line.split('\0')[1]!, line] as const));
  const had = byPath(before);
  const has = byPath(after);
  const paths = new Set([...had.keys(), ...has.keys()]);
  return [...paths].filter((name) => had.get(name) !== has.get(name)).sort().map((name) => `host checkout file changed: ${name}`);
}

function listDifferences(what: string, before: string[], after: string[]): string[] {
  const had = new Set(before);
  const has = new Set(after);
  return [
    ...before.filter((line) => line.trim() !== '' && !has.has(line)).map((line) => `${what} gone: ${line.trim()}`),
    ...after.filter((line) => line.trim() !== '' && !had.has(line)).map((line) => `${what} new: ${line.trim()}`),
  ];
}
