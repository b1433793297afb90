import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { runProgram, type ProgramResult } from '../proc/run-program.js';
import { launchGit } from './launcher.js';

// Every git command the harness runs ignores global and system config and runs no
// command the repository's config names (hooks, fsmonitor, filters, credential helpers,
// external diffs, pager, editor), so neither the repository nor the agent can get code
// run by corral through git. Filters are named by the repository, so they are switched
// off per call (filterOverrides); the rest by name here.
const HARDENED_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.untrackedCache=false',
  // The stat cache must not be told to trust more than stat: the fence leans on it.
  'core.ignoreStat=false',
  'core.trustctime=true',
  'core.checkStat=default',
  // A whole checkout and a plain index: the fence compares every file of the base.
  'core.sparseCheckout=false',
  'index.sparse=false',
  'core.splitIndex=false',
  'core.autocrlf=false',
  'gc.auto=0',
  'maintenance.auto=false',
  // HOME stays (tools need it), so the user's own ignore and attributes files must be
  // switched off by name: the fence must see the same changes on every machine.
  'core.excludesFile=/dev/null',
  'core.attributesFile=/dev/null',
  'credential.helper=',
  'protocol.allow=never',
  'commit.gpgSign=false',
  'tag.gpgSign=false',
  'diff.external=',
  'core.pager=cat',
  'user.name=corral',
  'user.email=corral@localhost',
];

export function hardenedGitEnv(base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TMPDIR', 'SYSTEMROOT']) {
    const value = base[name];
    if (value !== undefined) env[name] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_OPTIONAL_LOCKS: '0',
    GIT_NO_REPLACE_OBJECTS: '1',
    GIT_PAGER: 'cat',
    GIT_EDITOR: ':',
  };
}

export interface GitResult {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export class GitError extends Error {
  constructor(
    readonly args: string[],
    readonly result: GitResult,
  ) {
    super(`git ${args.join(' ')} failed (exit ${result.exitCode}): ${result.stderr.trim() || result.stdout.trim()}`);
    this.name = 'GitError';
  }
}

export interface GitOptions {
  /** Allow a non-zero exit instead of throwing GitError. */
  allowFailure?: boolean;
  /** Extra environment, e.g. GIT_INDEX_FILE. */
  env?: Record<string, string>;
  input?: string;
}

/**
 * The one way corral starts git: the program, its arguments and its environment, hardened.
 * Every git process of the harness, asynchronous or synchronous, is made here (an
 * architecture test holds the rest of src/ to that); `readGlobalIdentity` is the one
 * named exception.
 */
function hardenedCommand(args: string[], env: Record<string, string> = {}): { file: 'git'; args: string[]; env: Record<string, string> } {
  const trusted = (userSafeDirectories ?? []).flatMap((dir) => ['-c', `safe.directory=${dir}`]);
  return { file: 'git', args: [...HARDENED_CONFIG.flatMap((c) => ['-c', c]), ...trusted, ...args], env: { ...hardenedGitEnv(), ...env } };
}

/**
 * The user's own `safe.directory` values, once git has refused a repository for its owner
 * (undefined before that: most runs never need them, and reading costs a git process).
 * corral's git reads no global config, so without them a repository of another user that
 * the user trusts would be refused; the command line is config git honours for the key.
 */
let userSafeDirectories: string[] | undefined;

/** How git names the fix when it refuses a repository owned by someone else. */
const OWNERSHIP_FIX = /git config --global --add safe\.directory '?([^'\n]*)'?/;

/** The repository git refused for its owner, from a failed call's stderr; null for any other failure. */
export function refusedForOwnership(stderr: string): string | null {
  return OWNERSHIP_FIX.exec(stderr)?.[1]?.trim() ?? null;
}

/**
 * Reads the user's `safe.directory` values the first time git refuses a repository for
 * its owner: true when there are any, and the refused call is worth making again. Like
 * `readGlobalIdentity`, a deliberate read of one key of the global config, includes not
 * followed, nothing the config names run.
 */
function trustUserSafeDirectories(stderr: string): boolean {
  if (userSafeDirectories !== undefined || refusedForOwnership(stderr) === null) return false;
  userSafeDirectories = [];
  try {
    const listed = execFileSync('git', ['config', '--global', '--no-includes', '-z', '--get-all', 'safe.directory'], {
      cwd: '/',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GIT_CONFIG_NOSYSTEM: '1' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      timeout: 10_000,
    });
    // Each value ends with NUL; an empty one resets the list before it, as in git. A
    // trusted repository's `.git` is trusted too: git checks that path by itself for the
    // linked worktrees corral makes, and the user trusts the repository it belongs to.
    userSafeDirectories = listed
      .split('\0')
      .slice(0, -1)
      .flatMap((dir) => (dir === '' || dir === '*' || dir.endsWith('/*') ? [dir] : [dir, `${dir.replace(/\/+$/, '')}/.git`]));
  } catch {
    // Exit 1: the key is not set.
  }
  return userSafeDirectories.length > 0;
}

function startGit(cwd: string, args: string[], env: Record<string, string>, input?: string): Promise<ProgramResult> {
  const command = hardenedCommand(args, env);
  // Its own process group: a Ctrl-C in the terminal reaches corral, which then still
  // needs git to record the patch, not git itself.
  return launchGit(command.file, command.args, { cwd, env: command.env, ...(input === undefined ? {} : { input }) });
}

function startGitSync(cwd: string, args: string[], env: Record<string, string>, options: { maxBuffer?: number; stderr?: 'ignore' | 'pipe' } = {}): string {
  const command = hardenedCommand(args, env);
  return execFileSync(command.file, command.args, {
    cwd,
    env: command.env,
    encoding: 'utf8',
    maxBuffer: options.maxBuffer ?? 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', options.stderr ?? 'ignore'],
  });
}

/** Runs hardened git in `cwd` and returns its output; throws GitError on failure. */
export async function git(cwd: string, args: string[], options: GitOptions = {}): Promise<GitResult> {
  const { stdout, ...rest } = await runGit(cwd, args, options, 'utf8');
  return { stdout: String(stdout), ...rest };
}

/** Like `git`, but stdout as bytes: a patch of a non-UTF-8 file must survive unchanged. */
export async function gitBytes(cwd: string, args: string[], options: GitOptions = {}): Promise<Buffer> {
  return (await runGit(cwd, args, options, 'buffer')).stdout as Buffer;
}

/**
 * Hardened git run synchronously, for the few callers that cannot wait (the guard's
 * listing of tracked files, removing a worktree on the way out); throws on failure.
 */
export function gitSync(cwd: string, args: string[], options: { maxBuffer?: number; env?: Record<string, string> } = {}): string {
  return startGitSync(cwd, args, { ...options.env, ...filterOverridesSync(cwd, args) }, options);
}

// Commands that never read a file's content through the attributes (no clean or smudge
// filter can run), asked before anything is known about the repository: no filter lookup.
const NO_FILTER_COMMANDS = new Set(['rev-parse', 'for-each-ref', 'config', 'commit-tree', 'update-ref', 'cat-file', 'ls-tree', 'write-tree', 'symbolic-ref']);

function readsNoContent(args: string[]): boolean {
  // `worktree list` reads the worktrees' entries only; `worktree add` checks files out.
  return NO_FILTER_COMMANDS.has(args[0] ?? '') || (args[0] === 'worktree' && args[1] === 'list');
}

// A config key is never split across lines, and a filter driver, an include or a per-worktree
// config file is named in the repository's config file by these words: without them no filter
// can be defined, and no git process is needed to know it (the usual case).
const MAY_DEFINE_FILTERS = /filter|include|worktreeconfig|lfs/i;
const FILTER_LISTING = ['config', '--includes', '-z', '--name-only', '--get-regexp', '^(filter|lfs)\\.'];

/**
 * Settings of git-lfs that name a program it would run (an extension's clean or smudge
 * command, a transfer agent): in the repository's own config, they make corral leave
 * the lfs filter off for it, as for any filter the repository names.
 */
const LFS_RUNS_PROGRAM = /^lfs\.(extension\.|customtransfer\.|standalonetransferagent$)/i;

const LFS_FILTER_KEYS = ['clean', 'smudge', 'process', 'required'] as const;

/**
 * The lfs filter from the user's own global git config (`git lfs install`), read once:
 * the one filter corral's git runs, so that its checkout holds the files and not their
 * pointers, and a changed file is committed as a pointer. Like `readGlobalIdentity`, a
 * deliberate read of named keys of the global config only, includes not followed,
 * nothing the config names run; the repository's own definition never counts.
 */
type LfsFilter = Partial<Record<(typeof LFS_FILTER_KEYS)[number], string>>;

let userLfsFilter: LfsFilter | null | undefined;
let userLfsFilterRead: Promise<LfsFilter | null> | undefined;

const LFS_LISTING = ['config', '--global', '--no-includes', '-z', '--get-regexp', '^filter\\.lfs\\.(clean|smudge|process|required)$'];

function lfsListingEnv(): Record<string, string> {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', GIT_CONFIG_NOSYSTEM: '1' };
  for (const name of ['XDG_CONFIG_HOME', 'GIT_CONFIG_GLOBAL']) if (process.env[name]) env[name] = process.env[name];
  return env;
}

/** The filter a listing names; null without one (exit 1: git-lfs is not set up for the user). */
function lfsFilterFrom(listed: string): LfsFilter | null {
  const filter: LfsFilter = {};
  for (const record of listed.split('\0')) {
    const newline = record.indexOf('\n');
    if (newline === -1) continue;
    const name = record.slice('filter.lfs.'.length, newline).toLowerCase() as (typeof LFS_FILTER_KEYS)[number];
    filter[name] = record.slice(newline + 1);
  }
  // Without a command there is no filter to run.
  return filter.clean || filter.smudge || filter.process ? filter : null;
}

/**
 * Read once per process, without holding up the event loop (through the git launcher, so
 * this thread does not fork); every async git call that reads content waits for it. A
 * run asks for it as it starts making its worktree, so `worktree add` finds it read.
 */
export function loadUserLfsFilter(): Promise<LfsFilter | null> {
  if (userLfsFilter !== undefined) return Promise.resolve(userLfsFilter);
  userLfsFilterRead ??= launchGit('git', LFS_LISTING, { cwd: '/', env: lfsListingEnv() }).then(
    (result) => (userLfsFilter ??= result.exitCode === 0 ? lfsFilterFrom(result.stdout.toString('utf8')) : null),
    () => (userLfsFilter ??= null),
  );
  return userLfsFilterRead;
}

/** The same for a synchronous git call (a process on its way out) that comes before any async one read it. */
function readUserLfsFilterSync(): LfsFilter | null {
  if (userLfsFilter !== undefined) return userLfsFilter;
  try {
    userLfsFilter = lfsFilterFrom(execFileSync('git', LFS_LISTING, { cwd: '/', env: lfsListingEnv(), encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 }));
  } catch {
    userLfsFilter = null;
  }
  return userLfsFilter;
}

/**
 * Environment that switches off every filter driver the repository's config names (its
 * includes and per-worktree config too): an empty command disables a driver in git, and
 * `required=false` keeps git from failing for want of one. Passed as GIT_CONFIG_COUNT
 * pairs, which take any driver name, even one holding `=`.
 */
async function filterOverrides(cwd: string, args: string[], env: Record<string, string> = {}): Promise<Record<string, string>> {
  if (readsNoContent(args)) return {};
  // The call's own GIT_DIR, when it names one, is the repository whose config counts.
  const configFile = env.GIT_DIR === undefined ? (await gitPaths(cwd)).config : `${env.GIT_DIR}/config`;
  const [config, lfs] = await Promise.all([readFile(configFile, 'utf8').catch(() => ''), loadUserLfsFilter()]);
  if (!MAY_DEFINE_FILTERS.test(config)) return overridesFromListing(1, '', '', lfs);
  // A config that reads no other file says the same thing as long as its text is the same
  // (git-lfs puts a filter in many repositories' config): one listing per text.
  const selfContained = !READS_OTHER_CONFIG.test(config);
  const known = selfContained ? listedFilters.get(config) : undefined;
  if (known !== undefined) return known;
  const listing = await startGit(cwd, FILTER_LISTING, env);
  const overrides = overridesFromListing(listing.exitCode, listing.stdout.toString('utf8'), listing.stderr.toString('utf8'), lfs);
  if (selfContained) listedFilters.set(config, overrides);
  return overrides;
}

const READS_OTHER_CONFIG = /include|worktreeconfig/i;
const listedFilters = new Map<string, Record<string, string>>();

function filterOverridesSync(cwd: string, args: string[]): Record<string, string> {
  if (readsNoContent(args)) return {};
  let configFile = resolvedPaths.get(cwd)?.config;
  if (configFile === undefined) {
    const out = startGitSync(cwd, ['rev-parse', '--path-format=absolute', ...GIT_PATH_ARGS], {});
    const paths = readGitPaths(out.split('\n'));
    if (paths === null) throw new Error(`git rev-parse in ${cwd} named no config file`);
    configFile = paths.config;
  }
  let config = '';
  try {
    config = readFileSync(configFile, 'utf8');
  } catch {
    // No config file: no filter.
  }
  const lfs = readUserLfsFilterSync();
  if (!MAY_DEFINE_FILTERS.test(config)) return overridesFromListing(1, '', '', lfs);
  try {
    return overridesFromListing(0, startGitSync(cwd, FILTER_LISTING, {}, { stderr: 'pipe' }), '', lfs);
  } catch (error) {
    const failed = error as { status?: number | null; stdout?: string; stderr?: string };
    return overridesFromListing(failed.status ?? 128, String(failed.stdout ?? ''), String(failed.stderr ?? ''), lfs);
  }
}

/** The overrides for the filter drivers a `git config --name-only -z --get-regexp` listing names. */
function overridesFromListing(exitCode: number | null, stdout: string, stderr: string, userLfs: LfsFilter | null): Record<string, string> {
  // Exit 1: no such key. Anything else unreadable fails the call rather than risk a filter.
  if (exitCode !== 0 && exitCode !== 1) throw new GitError(FILTER_LISTING, { stdout, stderr, exitCode: exitCode ?? 1 });
  const keys = exitCode === 1 ? [] : stdout.split('\0');
  const drivers = new Set<string>();
  for (const key of keys) {
    if (!/^filter\./i.test(key)) continue;
    const first = key.indexOf('.');
    const last = key.lastIndexOf('.');
    if (first !== -1 && last > first) drivers.add(key.slice(first + 1, last));
  }
  const lfs = keys.some((key) => LFS_RUNS_PROGRAM.test(key)) ? null : userLfs;
  const env: Record<string, string> = {};
  let count = 0;
  const set = (key: string, value: string): void => {
    env[`GIT_CONFIG_KEY_${count}`] = key;
    env[`GIT_CONFIG_VALUE_${count}`] = value;
    count += 1;
  };
  for (const driver of drivers) {
    if (driver === 'lfs' && lfs !== null) continue;
    for (const [name, value] of [['clean', ''], ['smudge', ''], ['process', ''], ['required', 'false']] as const) set(`filter.${driver}.${name}`, value);
  }
  // Every key of the driver, so that none of the repository's own stays in force.
  if (lfs !== null) for (const name of LFS_FILTER_KEYS) set(`filter.lfs.${name}`, lfs[name] ?? (name === 'required' ? 'false' : ''));
  if (count > 0) env.GIT_CONFIG_COUNT = String(count);
  return env;
}

async function runGit(cwd: string, args: string[], options: GitOptions, encoding: 'utf8' | 'buffer'): Promise<{ stdout: string | Buffer; stderr: string; exitCode: number }> {
  let result = await startGit(cwd, args, { ...options.env, ...(await filterOverrides(cwd, args, options.env)) }, options.input);
  if (result.exitCode !== 0 && trustUserSafeDirectories(result.stderr.toString('utf8'))) {
    result = await startGit(cwd, args, { ...options.env, ...(await filterOverrides(cwd, args, options.env)) }, options.input);
  }
  const stderr = result.error === undefined ? result.stderr.toString('utf8') : `${result.stderr.toString('utf8')}${result.error}`;
  const exitCode = result.exitCode ?? 1;
  const stdout = encoding === 'utf8' ? result.stdout.toString('utf8') : result.stdout;
  if (exitCode !== 0 && !options.allowFailure) {
    throw new GitError(args, { stdout: result.stdout.toString('utf8'), stderr, exitCode });
  }
  return { stdout, stderr, exitCode };
}

/** The top directory of the repository containing `dir`, or null when it is not in one. */
export async function findRepoRoot(dir: string): Promise<string | null> {
  const r = await git(dir, ['rev-parse', '--show-toplevel'], { allowFailure: true }).catch(() => null);
  if (!r || r.exitCode !== 0) return null;
  return r.stdout.trim();
}

/**
 * The repository containing `dir` and the commit `rev` names in it, with one git process
 * (a ticket's load needs both, and each git process costs a fork): root null when `dir`
 * is in no repository, commit null when `rev` names no commit there. The same process
 * also says where the repository's git files are, which `gitPaths` then knows without
 * asking again: the run's worktree and host checks need them before anything else.
 */
export async function findRepoAndCommit(dir: string, rev: string): Promise<RepoAndCommit> {
  if (rev.startsWith('-')) return { root: await findRepoRoot(dir), commit: null };
  // git prints the paths and the top directory first and then verifies the rev: exit 1
  // (quiet) when the rev names no commit, 128 when there is no repository at all.
  const r = await git(dir, ['rev-parse', '--path-format=absolute', ...GIT_PATH_ARGS, '--show-toplevel', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    allowFailure: true,
  }).catch(() => null);
  const lines = r && (r.exitCode === 0 || r.exitCode === 1) ? r.stdout.split('\n') : [];
  const paths = readGitPaths(lines);
  const [root, commit] = lines.slice(GIT_PATH_LINES);
  if (root && paths !== null && !knownPaths.has(root)) remember(root, Promise.resolve(paths));
  const refused = r && r.exitCode !== 0 && r.exitCode !== 1 ? refusedForOwnership(r.stderr) : null;
  return { root: root || null, commit: r?.exitCode === 0 && commit ? commit : null, ...(refused ? { refused } : {}) };
}

type RepoAndCommit = { root: string | null; commit: string | null; refused?: string };

/**
 * findRepoAndCommit for one command: each folder and rev is asked of git once, its answer
 * shared by every later ask (the tickets of a folder, and `corral run` asking before the
 * code that reads them has loaded). For what is asked at one moment, not over a long life.
 */
export function sharedRepoLookups(): typeof findRepoAndCommit {
  const asked = new Map<string, Promise<RepoAndCommit>>();
  return (dir, rev) => {
    const key = `${dir}\0${rev}`;
    let found = asked.get(key);
    if (found === undefined) {
      asked.set(key, (found = findRepoAndCommit(dir, rev)));
      // Asked ahead and never awaited, a failure must not surface as an unhandled rejection.
      found.catch(() => undefined);
    }
    return found;
  };
}

/** The commit `rev` names in `repo`, or null when it does not resolve to a commit. */
export async function resolveCommit(repo: string, rev: string): Promise<string | null> {
  if (rev.startsWith('-')) return null;
  const r = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`], {
    allowFailure: true,
  });
  return r.exitCode === 0 ? r.stdout.trim() : null;
}

/** Where a repository's git files are, as absolute paths. */
export interface GitPaths {
  /** Where refs, objects and the worktrees' entries live. */
  commonDir: string;
  config: string;
  /**
   * This checkout's own git directory (a linked worktree's entry under the common dir), for
   * its per-worktree config. Its HEAD is asked of git, never read here: in a reftable
   * repository the HEAD file is a stub.
   */
  gitDir: string;
  /** This checkout's index file. */
  index: string;
}

const GIT_PATH_ARGS = ['--git-common-dir', '--git-path', 'config', '--git-dir', '--git-path', 'index'];
const GIT_PATH_LINES = 4;
const knownPaths = new Map<string, Promise<GitPaths>>();
/** The same answers once they are in, for the synchronous callers. */
const resolvedPaths = new Map<string, GitPaths>();

/**
 * Where `repo`'s git files are, asked of git once per process (they do not move while
 * corral runs). A ticket's load already learns them (findRepoAndCommit); callers that
 * ask at the same time share one pending answer.
 */
export function gitPaths(repo: string): Promise<GitPaths> {
  return knownPaths.get(repo) ?? remember(repo, askGitPaths(repo));
}

/** The absolute common git directory of `repo` (where worktrees, refs and objects live). */
export async function gitCommonDir(repo: string): Promise<string> {
  return (await gitPaths(repo)).commonDir;
}

/**
 * Where the files of `dir`, a linked worktree of `repo` just made, are: its `.git` file
 * names its own git directory (`<common dir>/worktrees/<name>`), so no git process is
 * needed; git is asked when the file says anything else. Remembered like `gitPaths`.
 */
export async function linkedWorktreePaths(repo: string, dir: string): Promise<GitPaths> {
  const known = knownPaths.get(dir);
  if (known !== undefined) return known;
  const { commonDir, config } = await gitPaths(repo);
  const text = await readFile(path.join(dir, '.git'), 'utf8').catch(() => '');
  const named = /^gitdir: (.+)\n?$/.exec(text)?.[1];
  // Newer git may write the path relative to the worktree (worktree.useRelativePaths).
  const gitDir = named === undefined ? undefined : path.resolve(dir, named);
  if (gitDir === undefined || path.dirname(gitDir) !== path.join(commonDir, 'worktrees')) return gitPaths(dir);
  return remember(dir, Promise.resolve({ commonDir, config, gitDir, index: path.join(gitDir, 'index') }));
}

async function askGitPaths(repo: string): Promise<GitPaths> {
  const args = ['rev-parse', '--path-format=absolute', ...GIT_PATH_ARGS];
  const r = await git(repo, args);
  const paths = readGitPaths(r.stdout.split('\n'));
  if (paths === null) throw new GitError(args, r);
  return paths;
}

function readGitPaths(lines: string[]): GitPaths | null {
  const [commonDir, config, gitDir, index] = lines;
  return commonDir && config && gitDir && index ? { commonDir, config, gitDir, index } : null;
}

function remember(repo: string, paths: Promise<GitPaths>): Promise<GitPaths> {
  // A failure is not remembered: the next caller asks again.
  paths.then(
    (known) => {
      if (knownPaths.get(repo) === paths) resolvedPaths.set(repo, known);
    },
    () => {
      if (knownPaths.get(repo) === paths) knownPaths.delete(repo);
    },
  );
  knownPaths.set(repo, paths);
  return paths;
}

/** One worktree of a repository as `git worktree list --porcelain` describes it. */
export interface WorktreeRecord {
  /** The worktree's folder (the main one first); for a bare repository, the repository. */
  dir: string;
  bare: boolean;
  /** The commit checked out; null for a bare repository (all zeros on an unborn branch). */
  head: string | null;
  /** The branch checked out, as a full ref name (`refs/heads/…`); null when detached or bare. */
  branch: string | null;
  /** The lock reason ('' for a lock without one); null when not locked. */
  locked: string | null;
  /** Why `git worktree prune` would forget it (its folder is gone); null when it would not. */
  prunable: string | null;
}

/**
 * The worktrees of `repo`, as git itself sees them: refs, HEADs and the worktrees' entries
 * are git's to read (in a reftable repository they are not files at all).
 */
export async function listWorktrees(repo: string): Promise<WorktreeRecord[]> {
  const args = worktreeListTakesZ ? ['worktree', 'list', '--porcelain', '-z'] : ['worktree', 'list', '--porcelain'];
  let listed = await git(repo, args, { allowFailure: true });
  // git reads each entry's files one after another (`locked`, `commondir`, `gitdir`) and
  // dies when one vanishes between two reads: another run (or the user) removing a
  // worktree at that moment. Parallel runs remove worktrees all the time, so a failed
  // listing is asked again; one that keeps failing is a real failure.
  for (let retry = 1; listed.exitCode !== 0 && listed.exitCode !== 129 && retry <= LIST_RETRIES; retry++) {
    await new Promise((resolve) => setTimeout(resolve, 5 * retry));
    listed = await git(repo, args, { allowFailure: true });
  }
  if (listed.exitCode === 0) return parseWorktreeList(listed.stdout, worktreeListTakesZ ? '\0' : '\n');
  // git before 2.36 knows no -z (a usage error, exit 129): lines then, which differ only
  // for a path or lock reason holding a newline (git quotes such a reason).
  if (listed.exitCode !== 129 || !worktreeListTakesZ) throw new GitError(args, listed);
  worktreeListTakesZ = false;
  return listWorktrees(repo);
}

const LIST_RETRIES = 4;

let worktreeListTakesZ = true;

/**
 * Records of `git worktree list --porcelain`: `name[ value]` fields, each ended by NUL
 * (with -z) or a newline, an empty field after each record.
 */
export function parseWorktreeList(stdout: string, separator: '\0' | '\n' = '\0'): WorktreeRecord[] {
  const records: WorktreeRecord[] = [];
  let current: WorktreeRecord | null = null;
  for (const field of stdout.split(separator)) {
    if (field === '') {
      if (current !== null) records.push(current);
      current = null;
      continue;
    }
    const space = field.indexOf(' ');
    const name = space === -1 ? field : field.slice(0, space);
    const value = space === -1 ? '' : field.slice(space + 1);
    if (name === 'worktree') {
      if (current !== null) records.push(current);
      current = { dir: value, bare: false, head: null, branch: null, locked: null, prunable: null };
      continue;
    }
    if (current === null) continue;
    if (name === 'bare') current.bare = true;
    else if (name === 'HEAD') current.head = value;
    else if (name === 'branch') current.branch = value;
    else if (name === 'locked') current.locked = value;
    else if (name === 'prunable') current.prunable = value;
  }
  if (current !== null) records.push(current);
  return records;
}

/** The user's name and email from their own global git config; either may be missing. */
export interface GitIdentity {
  name?: string;
  email?: string;
}

/**
 * `user.name` and `user.email` of the global git config under `userHome`: the one
 * deliberate exception to "global config ignored" (every other git call runs with
 * GIT_CONFIG_GLOBAL=/dev/null), so that the agent's commits in the sandbox carry the
 * user's name. Only those two keys are asked for, includes are not followed, and a
 * `git config` read runs nothing the config names (no hooks, filters or helpers).
 */
export async function readGlobalIdentity(userHome: string, searchPath: string): Promise<GitIdentity> {
  const result = await runProgram('git', ['config', '--global', '--no-includes', '-z', '--get-regexp', '^user\\.(name|email)$'], {
    cwd: '/',
    env: { PATH: searchPath, HOME: userHome, GIT_CONFIG_NOSYSTEM: '1' },
    timeoutMs: 10_000,
  });
  if (result.exitCode !== 0) return {};
  // --get-regexp -z prints `key\nvalue\0` records; the last one wins, as in git.
  const identity: GitIdentity = {};
  for (const record of result.stdout.toString('utf8').split('\0')) {
    const newline = record.indexOf('\n');
    if (newline === -1) continue;
    const key = record.slice(0, newline).toLowerCase();
    const value = record.slice(newline + 1);
    if (value.trim() === '') continue;
    if (key === 'user.name') identity.name = value;
    else if (key === 'user.email') identity.email = value;
  }
  return identity;
}
