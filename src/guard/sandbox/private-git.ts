import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { git } from '../../git/git.js';
import { formatGitConfig, parseGitConfigList, sanitiseGitConfig, type GitConfigEntry } from './git-config.js';

// Inside the sandbox the worktree's gitdir (`<host>/.git/worktrees/<name>`) is replaced by
// a private, writable one made here, so the agent's everyday git (add, commit, stash,
// checkout, restore) works and writes only the run's own copy. It is standalone (no
// `commondir` file): its own HEAD, index, refs and sanitised config, and the host's object
// store read through `objects/info/alternates`. The host's `.git` is never written, and the
// harness's own git, outside the sandbox, still sees the worktree as it was made.

/** Where a linked worktree's git files are on the host. */
export interface HostGit {
  /** `<host>/.git/worktrees/<name>`: its HEAD and index. */
  gitdir: string;
  /** `<host>/.git`: config, refs, objects, shallow. */
  commonDir: string;
}

/** The object stores git reads through alternates, from `objects` on: the chain as git follows it (real paths). */
export function objectStores(objects: string, depth = 0, seen = new Set<string>()): string[] {
  let real: string;
  try {
    real = realpathSync(objects);
  } catch {
    return [];
  }
  if (seen.has(real) || depth > 5) return [];
  seen.add(real);
  const found = [real];
  let alternates = '';
  try {
    alternates = readFileSync(path.join(real, 'info', 'alternates'), 'utf8');
  } catch {
    return found;
  }
  for (const line of alternates.split('\n')) {
    const entry = line.trim();
    if (entry === '' || entry.startsWith('#')) continue;
    found.push(...objectStores(path.resolve(real, entry), depth + 1, seen));
  }
  return found;
}

/**
 * Makes the private gitdir in `dir` (which must not exist) for the worktree whose host
 * gitdir and common dir are `host`. Returns the object stores it reads, which the sandbox
 * must show read-only.
 */
export async function makePrivateGitdir(dir: string, host: HostGit): Promise<{ objectStores: string[] }> {
  mkdirSync(path.join(dir, 'objects', 'info'), { recursive: true, mode: 0o700 });
  mkdirSync(path.join(dir, 'refs', 'heads'), { recursive: true });
  mkdirSync(path.join(dir, 'refs', 'tags'), { recursive: true });
  mkdirSync(path.join(dir, 'info'), { recursive: true });
  // Asked of git, not copied: a reftable repository's HEAD file is a stub. A run's worktree is detached.
  const head = (await git(host.gitdir, ['rev-parse', '--verify', 'HEAD'], { env: { GIT_DIR: host.gitdir } })).stdout.trim();
  writeFileSync(path.join(dir, 'HEAD'), `${head}\n`);
  // The index and any split-index parts it names; a worktree without one yet gets none.
  for (const name of readdirSync(host.gitdir)) {
    if (name === 'index' || name.startsWith('sharedindex.')) copyFileSync(path.join(host.gitdir, name), path.join(dir, name));
  }
  // A worktree's sparse patterns are its own; the rest is the repository's.
  for (const [from, name] of [[host.gitdir, 'info/sparse-checkout'], [host.commonDir, 'shallow'], [host.commonDir, 'info/exclude']] as const) {
    const file = path.join(from, name);
    if (existsSync(file)) copyFileSync(file, path.join(dir, name));
  }
  const stores = objectStores(path.join(host.commonDir, 'objects'));
  writeFileSync(path.join(dir, 'objects', 'info', 'alternates'), stores.map((store) => `${store}\n`).join(''));

  const [refs, config] = await Promise.all([
    // The host's stash stays the host's: the agent's stash list starts empty.
    git(host.commonDir, ['--git-dir', host.commonDir, 'for-each-ref', '--format=%(objectname) %(refname)']),
    hostConfig(host),
  ]);
  const packed = refs.stdout
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith(' refs/stash'))
    .map((line) => `${line}\n`)
    .join('');
  // No header: git then peels annotated tags itself when asked.
  writeFileSync(path.join(dir, 'packed-refs'), packed);
  writeFileSync(path.join(dir, 'config'), formatGitConfig(sanitiseGitConfig(config)));
  return { objectStores: stores };
}

/** The host repository's own config and the worktree's `config.worktree`, as entries; includes are not followed. */
async function hostConfig(host: HostGit): Promise<GitConfigEntry[]> {
  const files = [path.join(host.commonDir, 'config'), path.join(host.gitdir, 'config.worktree')].filter((file) => existsSync(file));
  const lists = await Promise.all(files.map((file) => git(host.commonDir, ['config', '--no-includes', '--file', file, '--list', '-z'])));
  return lists.flatMap((list) => parseGitConfigList(list.stdout));
}
