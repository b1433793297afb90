import { lstatSync } from 'node:fs';
import path from 'node:path';

/** Where git looks for a repository from one directory, and what it finds first. */
export interface DiscoveredRepository {
  /** A `.git` entry (directory, file or link) in `at`, or `at` itself taken as a bare repository. */
  kind: 'dotgit' | 'bare';
  /** The directory git stops in. */
  at: string;
  /** The `.git` entry, or the bare repository's directory. */
  entry: string;
}

/**
 * The repository git discovers from `dir`, walking up the way setup_git_directory does:
 * in each directory a `.git` entry first, then the directory itself as a bare
 * repository. It errs towards finding one: any `.git` entry counts (git skips a `.git`
 * directory it finds invalid and reads a `gitdir:` file wherever it points), and any
 * directory holding a `HEAD` counts as bare (git also wants `objects/` and `refs/`,
 * which a `commondir` file can place elsewhere). Null when none is found up to `/`.
 */
export function discoverRepository(dir: string): DiscoveredRepository | null {
  let current = path.resolve(dir);
  for (;;) {
    const dotGit = path.join(current, '.git');
    if (exists(dotGit)) return { kind: 'dotgit', at: current, entry: dotGit };
    if (exists(path.join(current, 'HEAD'))) return { kind: 'bare', at: current, entry: current };
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}

/** Every directory git looks in from `dir` until it finds `found` (or reaches `/`): where a planted file would change what it finds. */
export function discoveryPath(dir: string, found: DiscoveredRepository | null): string[] {
  const dirs: string[] = [];
  let current = path.resolve(dir);
  for (;;) {
    dirs.push(current);
    if (found !== null && current === found.at) return dirs;
    const parent = path.dirname(current);
    if (parent === current) return dirs;
    current = parent;
  }
}

function exists(file: string): boolean {
  try {
    lstatSync(file);
    return true;
  } catch {
    return false;
  }
}
