import { realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { isSecret } from '../../policy/protected-paths.js';
import { within } from './paths.js';
import { dirEntries } from '../paths/dir-entries.js';

// Inside the sandbox the real home is out of view (an allow-list, not a deny-list). What
// stays visible, read-only: the PATH entries that lie under it (toolchains installed per
// user) and the folders the config names in `sandbox.read`. Credential files known to
// live inside such a tree are masked all the same.

/**
 * Where credentials live in a home directory (relative to it). The home is hidden whole;
 * these decide which `sandbox.read` folders are refused and what is masked inside a
 * folder that stays visible.
 */
export const CREDENTIAL_PLACES = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.bunfig.toml',
  '.pypirc',
  '.git-credentials',
  '.gitconfig',
  '.config/git',
  '.config/gh',
  '.config/hub',
  '.config/glab-cli',
  '.config/op',
  '.config/helm',
  '.config/doctl',
  '.config/configstore',
  '.claude',
  '.claude.json',
  '.codex',
  '.terraform.d',
  '.terraformrc',
  '.vault-token',
  '.m2',
  '.gradle',
  '.ivy2',
  '.sbt',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.local/share/keyrings',
  '.password-store',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
];

/**
 * Names of files that hold a token wherever a tool keeps them (a node prefix's
 * `etc/npmrc`, cargo's `credentials.toml`), looked for near the top of a visible tree.
 */
const CREDENTIAL_FILE_NAMES = new Set([
  'credentials',
  'credentials.toml',
  'credentials.json',
  'credentials.tfrc.json',
  '.credentials.json',
  'npmrc',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.netrc',
  '.pypirc',
  '.git-credentials',
  'hosts.yml',
  'auth.json',
  'settings.xml',
  'gradle.properties',
  '.vault-token',
]);

/** How deep below a visible tree's top credential files are looked for. */
const SCAN_DEPTH = 2;

/** Folders that only group others: a toolchain's `bin` in them is bound alone, never the folder. */
const GROUPING = new Set(['.local', '.config', '.cache', 'bin', '.bin']);

/** For a `bin` of these, what else the toolchain needs (rustup's proxies in ~/.cargo/bin read ~/.rustup). */
const COMPANIONS: Record<string, string[]> = { '.cargo': ['.rustup'], '.local': ['.local/lib'] };

/** A folder to show read-only, and the credential files and folders inside it to mask. */
export interface VisibleTree {
  /** The real folder shown. */
  source: string;
  /** Where the commands see it (differs from `source` when a PATH entry is a link). */
  target: string;
}

/**
 * Refuses a `sandbox.read` folder that is, lies in, or holds a place where credentials
 * live, or that would show the whole home; returns the folders as absolute paths, `~`
 * expanded. Fails closed: a name it cannot read as a path is refused too.
 */
export function checkReadPaths(readPaths: string[], home: string | undefined): string[] {
  return readPaths.map((name) => {
    const expanded = name === '~' || name.startsWith('~/') ? (home === undefined ? undefined : path.join(home, name.slice(1))) : name;
    if (expanded === undefined || !path.isAbsolute(expanded)) {
      throw new UsageError(`sandbox: read: ${JSON.stringify(name)} is not an absolute path or one under ~`);
    }
    const folder = path.resolve(expanded);
    const problem = readProblem(folder, home);
    if (problem) throw new UsageError(`sandbox: read: ${name} ${problem}; name a narrower folder that holds no credentials`);
    return folder;
  });
}

function readProblem(folder: string, home: string | undefined): string | undefined {
  if (isSecret(folder) || isSecret(path.join(folder, 'x'))) return 'is a secret folder';
  const homes = [home, ...realOrNothing(home)].filter((h): h is string => h !== undefined);
  for (const h of homes) {
    if (within(h, folder)) return 'would show the whole home directory';
    for (const place of CREDENTIAL_PLACES) {
      const full = path.join(h, place);
      if (within(folder, full)) return `is inside ~/${place}, where credentials live`;
      if (within(full, folder)) return `holds ~/${place}, where credentials live`;
    }
  }
  return undefined;
}

/**
 * The folders of `searchPath` that lie under a hidden folder (`covered`, real paths),
 * widened to the toolchain they belong to: a `bin` or `shims` folder brings its parent
 * (pyenv's shims need ~/.pyenv), unless that parent only groups others (~/.local, the home).
 */
export function toolchainTrees(searchPath: string, covered: string[]): VisibleTree[] {
  const trees: VisibleTree[] = [];
  for (const entry of searchPath.split(path.delimiter)) {
    if (entry === '' || !path.isAbsolute(entry)) continue;
    const literal = path.resolve(entry);
    const source = realOrNothing(literal)[0];
    if (source === undefined || !isDirectory(source)) continue;
    // Where the commands look for it: the real path, or (for a link inside a hidden
    // folder to a folder outside it) the link's own place, with its parent resolved.
    const parentReal = realOrNothing(path.dirname(literal))[0];
    const target = covered.some((c) => within(source, c)) ? source : parentReal === undefined ? undefined : path.join(parentReal, path.basename(literal));
    if (target === undefined) continue;
    const cover = covered.find((c) => within(target, c) && target !== c);
    if (cover === undefined) continue;
    trees.push(...widen(source, target, cover));
  }
  return trees;
}

function widen(source: string, target: string, cover: string): VisibleTree[] {
  const parent = path.dirname(target);
  const parentName = path.basename(parent);
  const toolchainBin = ['bin', 'shims'].includes(path.basename(target)) && source === target;
  if (!toolchainBin) return [{ source, target }];
  const companions = companionTrees((COMPANIONS[parentName] ?? []).map((rel) => path.join(path.dirname(parent), rel)));
  const groupsOnly = parent === cover || GROUPING.has(parentName);
  return [groupsOnly ? { source, target } : { source: parent, target: parent }, ...companions];
}

function companionTrees(folders: string[]): VisibleTree[] {
  return folders.flatMap((folder) => realOrNothing(folder).filter(isDirectory).map((real) => ({ source: real, target: real })));
}

/**
 * What to mask inside the visible trees: the credential places of each home that lie in
 * one, and files named like credentials near a tree's top.
 */
export function credentialsInTrees(trees: VisibleTree[], homes: string[]): { dirs: string[]; files: string[] } {
  const dirs = new Set<string>();
  const files = new Set<string>();
  const add = (p: string): void => {
    try {
      (statSync(p).isDirectory() ? dirs : files).add(p);
    } catch {
      // Not there: nothing to mask.
    }
  };
  for (const tree of trees) {
    for (const home of homes) {
      for (const place of CREDENTIAL_PLACES) {
        const full = path.join(home, place);
        if (within(full, tree.target) && full !== tree.target) add(full);
      }
    }
    scan(tree.target, 0, (file) => add(file));
  }
  return { dirs: [...dirs], files: [...files] };
}

function scan(dir: string, depth: number, found: (file: string) => void): void {
  for (const entry of dirEntries(dir)) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (depth < SCAN_DEPTH && entry.name !== 'node_modules') scan(full, depth + 1, found);
    } else if (CREDENTIAL_FILE_NAMES.has(entry.name) || isSecret(full)) {
      found(full);
    }
  }
}

function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

function realOrNothing(p: string | undefined): string[] {
  if (p === undefined) return [];
  try {
    return [realpathSync(p)];
  } catch {
    return [];
  }
}
