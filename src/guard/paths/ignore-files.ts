import { readFileSync } from 'node:fs';
import path from 'node:path';
import { isSecret } from '../../policy/protected-paths.js';
import { dirEntries } from './dir-entries.js';

/** Files whose patterns search tools obey per directory: ripgrep's, git's, fd's and ag's. */
export const IGNORE_FILE_NAMES = new Set(['.ignore', '.rgignore', '.gitignore', '.fdignore', '.agignore']);

const WALK_LIMIT = 50_000;

/**
 * The first ignore file a search of `dir` reads that can whitelist a secret, or null when
 * none can. A search that skips hidden files still prints one an ignore file whitelists
 * (`!.env` in `.ignore` or `.rgignore` makes `rg` print `.env`), so hidden files may be
 * assumed skipped only when this is null. Read: the ignore files of every directory the
 * search enters (hidden ones are not entered unless whitelisted, which needs a `!` in a
 * file read here first), of every parent up to `/`, each parent's `.git/info/exclude`,
 * `extra` (the repository's own exclude files) and the user's global git excludes. One
 * that exists but cannot be read counts as whitelisting.
 */
export function whitelistingIgnoreFile(dir: string, extra: string[], env: Record<string, string>): string | null {
  const walk = ignoreFilesUnder(dir);
  // Too many directories to read each one's ignore files: any of them may whitelist.
  if (walk === null) return dir;
  const candidates: [file: string, base: string][] = [...extra, ...globalExcludes(env)].map((file) => [file, dir]);
  for (let current = path.dirname(dir); ; current = path.dirname(current)) {
    for (const name of IGNORE_FILE_NAMES) candidates.push([path.join(current, name), current]);
    candidates.push([path.join(current, '.git', 'info', 'exclude'), current]);
    if (current === path.dirname(current)) break;
  }
  for (const file of walk.files) candidates.push([file, path.dirname(file)]);
  return candidates.find(([file, base]) => whitelists(file, base, walk.hiddenDirs))?.[0] ?? null;
}

/** Ignore files in `dir` and every directory under it that is not hidden (node_modules and .git left out), and the hidden directories there. */
function ignoreFilesUnder(dir: string): { files: string[]; hiddenDirs: string[] } | null {
  const files: string[] = [];
  const hiddenDirs: string[] = [];
  const stack = [dir];
  let seen = 0;
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const entry of dirEntries(current)) {
      if (++seen > WALK_LIMIT) return null;
      const full = path.join(current, entry.name);
      if (IGNORE_FILE_NAMES.has(entry.name)) files.push(full);
      else if (entry.isDirectory() && entry.name.startsWith('.') && entry.name !== '.git') hiddenDirs.push(full);
      else if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') stack.push(full);
    }
  }
  return { files, hiddenDirs };
}

/** Whether a file of ignore patterns holds a negation that can expose a secret; a missing file holds none, an unreadable one may. */
function whitelists(file: string, base: string, hiddenDirs: string[]): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code !== 'ENOENT' && code !== 'ENOTDIR';
  }
  return text.split(/\r?\n/).some((line) => line.trimStart().startsWith('!') && exposes(line.trimStart().slice(1).trimEnd(), base, hiddenDirs));
}

/**
 * Whether a negated pattern can whitelist a secret: any glob or directory pattern can; a
 * plain name can when it names a secret (`!.env`) or a hidden directory present under the
 * search (entered whole, its own ignore files unread here). `!.gitkeep` and
 * `!.env.example` cannot.
 */
function exposes(pattern: string, base: string, hiddenDirs: string[]): boolean {
  if (pattern === '') return false;
  if (/[*?[\\]/.test(pattern) || pattern.endsWith('/')) return true;
  const anchored = pattern.replace(/\/$/, '').includes('/');
  const relative = pattern.replace(/^\//, '');
  const target = path.join(base, relative);
  if (isSecret(target)) return true;
  return hiddenDirs.some((hidden) => (anchored ? hidden === target : path.basename(hidden) === path.basename(relative)));
}

/** git's global excludes: `core.excludesFile` from the user's config, or the XDG default. */
function globalExcludes(env: Record<string, string>): string[] {
  const home = env.HOME;
  const xdg = env.XDG_CONFIG_HOME ?? (home === undefined ? undefined : path.join(home, '.config'));
  const files = xdg === undefined ? [] : [path.join(xdg, 'git', 'ignore')];
  for (const config of [home === undefined ? null : path.join(home, '.gitconfig'), xdg === undefined ? null : path.join(xdg, 'git', 'config')]) {
    if (config === null) continue;
    let text: string;
    try {
      text = readFileSync(config, 'utf8');
    } catch {
      continue;
    }
    // A config file's own syntax, one `key = value` a line; a value we cannot place is read as the whole line.
    for (const line of text.split(/\r?\n/)) {
      const match = /^\s*excludesfile\s*=\s*"?([^"]*)"?\s*$/i.exec(line);
      if (match === null) continue;
      const value = match[1]!.trim();
      files.push(value.startsWith('~/') && home !== undefined ? path.join(home, value.slice(2)) : path.resolve(path.dirname(config), value));
    }
  }
  return files;
}
