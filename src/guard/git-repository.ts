import path from 'node:path';
import type { CallSite, PathFact } from './facts.js';
import { discoverRepository, discoveryPath } from './paths/git-discovery.js';
import { resolvePhysical } from './paths/resolve.js';
import type { WordValue } from './shell/words.js';

/** A git command as the facts see it: its argv and the directory it starts in. */
export interface GitCall {
  args: WordValue[];
  cwd: string | null;
}

/** Global options of git that take the next word as their value. */
const GLOBAL_WITH_VALUE = new Set(['-c', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix']);

/**
 * Why a git command may use a repository other than the worktree's own, or null when it
 * cannot. A repository found elsewhere (a bare one or a `.git` the agent wrote under
 * `src/`, or one outside the worktree) brings its own config, and its `core.fsmonitor`,
 * `core.pager` or `diff.external` run programs even for `git status`. A call that also
 * writes a `.git` or `HEAD` (or a whole directory) where git will look could plant one
 * before git runs.
 */
export function foreignRepository(call: GitCall, writes: PathFact[], site: CallSite): string | null {
  const dir = effectiveDirectory(call);
  if (typeof dir !== 'string') return dir.why;
  let real: string;
  try {
    real = resolvePhysical(dir, '/');
  } catch {
    return `git runs in ${dir}, which cannot be resolved, so the repository it uses is not known`;
  }
  const found = discoverRepository(real);
  const shown = (where: string): string => path.relative(site.worktree, where) || '.';
  if (found !== null && !isOwn(found.kind, found.at, found.entry, site)) {
    return `git would use the repository at ${shown(found.entry)} (found from ${shown(real)}), not the worktree's own`;
  }
  const looked = new Set(discoveryPath(real, found));
  for (const write of writes) {
    if (write.path === null || write.pseudo) continue;
    const planted = (looked.has(path.dirname(write.path)) && (path.basename(write.path) === '.git' || path.basename(write.path) === 'HEAD')) || (write.recursive && looked.has(write.path));
    if (planted) return `the call writes ${shown(write.path)} where git looks for a repository from ${shown(real)}, so git may use one the agent planted`;
  }
  return null;
}

/** The directory git starts from: where it runs, then each `-C`. */
function effectiveDirectory(call: GitCall): string | { why: string } {
  if (call.cwd === null) return { why: 'the directory git runs in is not known, so neither is the repository it uses' };
  let dir = call.cwd;
  for (let i = 1; i < call.args.length; i++) {
    const arg = call.args[i]!;
    if (!arg.text.startsWith('-') || arg.unknown !== undefined) break;
    if (arg.text === '-C') {
      const value = call.args[i + 1];
      if (value === undefined) break;
      if (value.unknown !== undefined || value.glob !== null) return { why: 'the directory `git -C` names is not known before it runs, so neither is the repository it uses' };
      if (value.text !== '') dir = path.resolve(dir, value.text);
      i += 1;
    } else if (GLOBAL_WITH_VALUE.has(arg.text)) i += 1;
  }
  return dir;
}

/** The worktree's own repository: its `.git` at the root, or (`git -C .git`) one of its git directories. */
function isOwn(kind: 'dotgit' | 'bare', at: string, entry: string, site: CallSite): boolean {
  if (kind === 'dotgit') return at === site.worktree;
  return site.git.dirs.includes(entry);
}
