import type { WordValue } from '../shell/words.js';
import { UNKNOWN_ARGUMENT } from './options.js';
import type { BuiltInRule } from '../../policy/rule-ids.js';

/** How a command uses a path: reads its content, writes or deletes it, lists names, or runs it. */
export type Access = 'read' | 'write' | 'list' | 'exec';

export interface PathUse {
  value: WordValue;
  access: Access;
  /** A directory taken whole: everything under it is read or written. */
  recursive: boolean;
  /** Where the path came from, for people: `cat argument`, `redirect >`. */
  origin: string;
  /** The command acts on a symlink itself, not on what it points to (`rm link`, `mv link x`). */
  noFollow?: boolean;
  /** Only files whose names match one of these globs are read (`grep -r --include='*.js'`). */
  only?: string[];
  /** Files whose names match these globs are skipped (`grep -r --exclude='.env*'`). */
  except?: string[];
  /** Taken whole, symlinks inside are followed (`grep -R`, find's `{}` handed to a command). */
  followsLinks?: boolean;
  /** The entry keeps existing under another name (`mv link x`): where a symlink points matters later. */
  keepsLink?: boolean;
}

/** A baseline hard limit one command breaks on its own. */
export interface Hazard {
  rule: BuiltInRule;
  reason: string;
  /**
   * Bubblewrap without network confines what it does to the worktree and the run's
   * private directories (its own git directory, /tmp, $HOME, pid namespace), so there it
   * is left to the fence: `git stash`, `git reset --hard`, `chmod -R`, `pkill`.
   */
  contained?: true;
}

export interface CommandEffects {
  name: string;
  /** Known to do nothing but read, list and write the paths listed. */
  known: boolean;
  /** Runs other commands that are judged on their own (`timeout`, `bash -c`, `xargs`). */
  wrapper: boolean;
  paths: PathUse[];
  hazards: Hazard[];
  /** Fetches from the network / runs code it is given: together they are a download run unseen. */
  role?: 'downloader' | 'interpreter';
  /** Why the command is not known to be safe. */
  why?: string;
  /** Commands it amounts to, judged by rules too: `find -delete` is an `rm`. */
  implied?: string[][];
}

export type Known = (paths: PathUse[], extra?: Partial<CommandEffects>) => CommandEffects;
export type Unknown = (why: string, paths?: PathUse[], extra?: Partial<CommandEffects>) => CommandEffects;

export function use(value: WordValue, access: Access, origin: string, recursive = false, extra: Partial<PathUse> = {}): PathUse {
  return { value, access, recursive: recursive || value.subtree === true, origin, ...(value.subtree ? { followsLinks: true } : {}), ...extra };
}

/**
 * Every argument of a command the guard does not know might be a path it reads, so
 * secrets are checked on each (and on the value of `--opt=value` and `rev:path`).
 */
export function anyPaths(args: WordValue[], origin: string, access: Access = 'read'): PathUse[] {
  const uses: PathUse[] = [];
  for (const arg of args) {
    if (arg.unknown !== undefined) continue;
    if (!arg.text.startsWith('-')) uses.push(use(arg, access, origin));
    const eq = arg.text.indexOf('=');
    if (eq > 0) uses.push(use({ ...arg, text: arg.text.slice(eq + 1), glob: null }, access, origin));
    const colon = arg.text.indexOf(':');
    if (colon > 0 && !arg.text.includes('://')) uses.push(use({ ...arg, text: arg.text.slice(colon + 1), glob: null }, access, origin));
  }
  return uses;
}

/** `--opt` or an unknown long option as a reason a command is not known. */
export function unknownOption(name: string, option: string): string {
  if (option === UNKNOWN_ARGUMENT) return `\`${name}\` gets an argument not known before it runs, which may be an option`;
  return `\`${name} ${option}\` is not an option the guard knows for ${name}`;
}
