import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';
import { git } from './git.js';

// The fence proves what changed in the worktree; this proves the host repository did not
// change under the run: an agent (or a program it ran) that moves HEAD or a branch, sets
// git config, plants a hook or stages something in the host is caught.

/** What of the host repository a run must leave as it found it. */
export interface HostState {
  head: string;
  /** `refname sha` lines, the run's own `refs/heads/corral/*` left out. */
  refs: string[];
  config: string;
  /** `name mode sha256` lines of the hooks directory. */
  hooks: string[];
  /** `git ls-files --stage`: what is staged, not the stat cache a `git status` refreshes. */
  index: string;
}

export async function recordHostState(repo: string): Promise<HostState> {
  const [symbolic, commit, refs, paths, index] = await Promise.all([
    git(repo, ['symbolic-ref', '-q', 'HEAD'], { allowFailure: true }),
    git(repo, ['rev-parse', '-q', '--verify', 'HEAD'], { allowFailure: true }),
    git(repo, ['for-each-ref', '--format=%(refname) %(objectname)']),
    // One process for both paths. Not `--git-path hooks` for the hooks: the hardened git
    // points core.hooksPath at /dev/null.
    git(repo, ['rev-parse', '--path-format=absolute', '--git-path', 'config', '--git-common-dir']),
    git(repo, ['ls-files', '--stage', '-z']),
  ]);
  const [configFile = '', commonDir = ''] = paths.stdout.split('\n');
  const config = await readFile(configFile, 'utf8').catch(() => '');
  return {
    head: `${symbolic.stdout.trim() || '(detached)'} ${commit.stdout.trim() || '(no commit)'}`,
    refs: refs.stdout.split('\n').filter((line) => line !== '' && !line.startsWith('refs/heads/corral/')),
    config,
    // The default hooks folder and, when the repository sets one, its core.hooksPath (husky and friends).
    hooks: await hookLines(repo, configFile, config, path.join(commonDir, 'hooks')),
    index: createHash('sha256').update(index.stdout).digest('hex'),
  };
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

/** Each difference between two states, as a line a person can act on; empty when the host is as it was. */
export function hostDifferences(before: HostState, after: HostState): string[] {
  const differences: string[] = [];
  if (before.head !== after.head) differences.push(`HEAD moved: ${before.head} → ${after.head}`);
  differences.push(...listDifferences('ref', before.refs, after.refs));
  if (before.config !== after.config) {
    differences.push(...listDifferences('git config line', before.config.split('\n'), after.config.split('\n')));
  }
  differences.push(...listDifferences('hook', before.hooks, after.hooks));
  if (before.index !== after.index) differences.push('the host index (what is staged) changed');
  return differences;
}

function listDifferences(what: string, before: string[], after: string[]): string[] {
  const had = new Set(before);
  const has = new Set(after);
  return [
    ...before.filter((line) => line.trim() !== '' && !has.has(line)).map((line) => `${what} gone: ${line.trim()}`),
    ...after.filter((line) => line.trim() !== '' && !had.has(line)).map((line) => `${what} new: ${line.trim()}`),
  ];
}
