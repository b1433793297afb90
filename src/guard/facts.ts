import { lstatSync } from 'node:fs';
import path from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { commandEffects, type Access, type CommandEffects, type PathUse } from './commands/effects.js';
import { HIDDEN_SKIPPED } from './commands/search.js';
import { foreignRepository, type GitCall } from './git-repository.js';
import { IGNORE_FILE_NAMES } from './paths/ignore-files.js';
import { globCandidates, resolveLinkItself, resolvePhysical } from './paths/resolve.js';
import { isDevice, isGitMetadata, isPseudoDevice, isSecret, type GitMetadata } from '../policy/protected-paths.js';
import { analyseScript, type SimpleCommand } from './shell/analyse.js';
import { UNKNOWN_ARG } from './unknown-arg.js';
import { dirEntries } from './paths/dir-entries.js';

/** What the guard knows about where a call runs. */
export interface CallSite {
  /** Real path of the worktree root. */
  worktree: string;
  /** The run's private temp dir, which commands may write. */
  tmpDir: string | null;
  env: Record<string, string>;
  git: GitMetadata;
  /** The simple commands of the ticket's checks, as `cwd\0argv` keys. */
  checkCommands: Set<string>;
  /** Real paths of the secret files git tracks in the worktree (what `git show` can print); listed once, when first needed. */
  trackedSecrets(): string[];
  /**
   * Whether a secret-named file is one git tracks with no credential in it (an `.npmrc`
   * of settings): every clone has it, and it is not a secret (paths/tracked-secrets.ts).
   */
  harmlessTracked(real: string): boolean;
  /** Where the run's commands run: what the sandbox contains, the guard need not decide. */
  sandbox: GuardSandbox;
  /**
   * Directories outside the worktree that are the command's own scratch space: inside
   * bubblewrap, /tmp and $HOME are private to the run. Empty for corral's own file tools,
   * which run in corral's process and see the real ones.
   */
  scratch: string[];
  /** Real paths of secret-named worktree files the ticket exposes: not secrets here. */
  exposed: Set<string>;
}

/** The sandbox as the guard sees it. */
export interface GuardSandbox {
  kind: 'bwrap' | 'none';
  /** Whether commands reach the network (always true without a sandbox). */
  network: boolean;
}

/**
 * Whether the sandbox contains what a Bash call does beyond what the guard can see:
 * bubblewrap without network confines writes, processes, secrets and signals, so an
 * interpreter, a package script or an unknown program cannot do harm the fence will not
 * find. With network, anything unseen could send the worktree away, so it stays asked.
 */
export function containedBySandbox(facts: Pick<CallFacts, 'tool'>, site: Pick<CallSite, 'sandbox'>): boolean {
  return facts.tool === 'Bash' && site.sandbox.kind === 'bwrap' && !site.sandbox.network;
}

/** One path a call touches, resolved as the OS will resolve it. */
export interface PathFact {
  /** As written in the call. */
  given: string;
  /** Real absolute path; null when it cannot be known before the call runs. */
  path: string | null;
  access: Access;
  recursive: boolean;
  /** Where it came from: `Read file_path`, `cat argument`, `redirect >`. */
  origin: string;
  inside: boolean;
  /** Relative to the worktree root when inside. */
  relative: string | null;
  secret: boolean;
  git: boolean;
  tmp: boolean;
  device: boolean;
  /** /dev/null, /dev/stdout and other harmless pseudo-devices. */
  pseudo: boolean;
  /** Matched through a glob (or a glob's protected probe). */
  glob: boolean;
  /** Why `path` is null. */
  unknown?: string;
  /** Only files under `path` whose names match these globs are read. */
  only?: string[];
  /** Symlinks under `path` are followed when it is taken whole. */
  followsLinks?: boolean;
  /** Files under `path` whose names (or a folder on the way) match these globs are skipped. */
  except?: string[];
}

export interface CommandFact {
  name: string;
  argv: string[];
  cwd: string | null;
  via: string[];
  source: string;
  effects: CommandEffects;
  /** One of the ticket's own check commands. */
  check: boolean;
  /** Values of arguments that are not known before the command runs (placeholders in argv). */
  unknownArgs: number[];
}

export interface CallFacts {
  tool: string;
  input: Record<string, unknown>;
  commands: CommandFact[];
  paths: PathFact[];
  /** Why part of the call cannot be analysed. */
  problems: string[];
}


/** Commands of the ticket's checks, keyed the way `checkKey` keys a parsed command. */
export function checkKey(cwd: string | null, argv: string[]): string {
  return `${cwd ?? '?'}\u0000${argv.join('\u0000')}`;
}

/** Parses a Bash command into facts: every simple command with its effects, every path resolved. */
export function bashFacts(parser: Parser, command: string, site: CallSite, input: Record<string, unknown>, start = site.worktree): CallFacts {
  const analysis = analyseScript(parser, command, { cwd: start, env: site.env });
  const facts: CallFacts = { tool: 'Bash', input, commands: [], paths: [], problems: [...analysis.problems] };
  const gitCalls: GitCall[] = [];
  for (const simple of analysis.commands) {
    let effects = commandEffects(simple);
    if (effects.name === 'git') gitCalls.push(simple);
    // A config file rg reads from the environment can add --pre (a program) or --hidden.
    if (effects.name === 'rg' && site.env.RIPGREP_CONFIG_PATH !== undefined && !simple.args.some((arg) => arg.text === '--no-config')) {
      effects = { ...effects, known: false, why: effects.why ?? 'rg reads options from RIPGREP_CONFIG_PATH, which can name a program to run (--pre)' };
    }
    const argv = simple.args.map((arg) => (arg.unknown === undefined ? arg.text : UNKNOWN_ARG));
    const unknownArgs = simple.args.flatMap((arg, index) => (arg.unknown === undefined ? [] : [index]));
    facts.commands.push({
      name: effects.name,
      argv,
      cwd: simple.cwd,
      via: simple.via,
      source: simple.source,
      effects,
      check: unknownArgs.length === 0 && site.checkCommands.has(checkKey(simple.cwd, argv)),
      unknownArgs,
    });
    for (const used of effects.paths) facts.paths.push(...resolveUse(used, simple, site));
    for (const implied of effects.implied ?? []) {
      facts.commands.push({ name: implied[0]!, argv: implied, cwd: simple.cwd, via: [...simple.via, effects.name], source: simple.source, effects: { ...effects, implied: [] }, check: false, unknownArgs: [] });
    }
    // Where a command runs is looked at too: `cd /etc && ls` lists outside the worktree.
    if (simple.args.length > 0 && effects.name !== 'cd' && effects.name !== 'pushd') {
      facts.paths.push(simple.cwd === null ? unknownPath('.', 'list', false, 'working directory', 'the directory it runs in is not known') : pathFact(simple.cwd, simple.cwd, '/', 'list', false, 'working directory', site, false));
    }
  }
  facts.paths = uniquePaths(facts.paths);
  // An ignore file this very call writes is not on disk when the guard reads them: hidden files count.
  if (facts.paths.some((fact) => fact.access === 'write' && !fact.pseudo && (fact.recursive || fact.path === null || IGNORE_FILE_NAMES.has(path.basename(fact.path))))) {
    for (const fact of facts.paths) fact.origin = fact.origin.replace(HIDDEN_SKIPPED, ' (hidden files counted: the call writes an ignore file or a whole folder)');
  }
  // Which repository git finds is read from the file system: one the agent planted brings its own config.
  const writes = facts.paths.filter((fact) => fact.access === 'write');
  for (const call of gitCalls) {
    const why = foreignRepository(call, writes, site);
    if (why !== null && !facts.problems.includes(why)) facts.problems.push(why);
  }
  return facts;
}

function resolveUse(used: PathUse, command: SimpleCommand, site: CallSite): PathFact[] {
  const { value, access, recursive, origin } = used;
  const given = value.unknown === undefined ? value.text : UNKNOWN_ARG;
  if (value.unknown !== undefined) return [unknownPath(given, access, recursive, origin, value.unknown)];
  if (command.cwd === null && !path.isAbsolute(value.text)) return [unknownPath(given, access, recursive, origin, 'the directory it runs in is not known')];
  const cwd = command.cwd ?? site.worktree;
  const extra = { ...(used.only ? { only: used.only } : {}), ...(used.except ? { except: used.except } : {}), ...(used.followsLinks ? { followsLinks: true } : {}) };
  if (used.keepsLink && value.glob === null) {
    // A renamed symlink can be written through next: where it points is looked at.
    const target = linkTarget(value.text, cwd);
    if (target !== null) return [{ ...pathFact(given, value.text, cwd, access, recursive, origin, site, false, true), ...extra }, classify(given, target, 'list', false, 'symlink target', site, false)];
  }
  if (value.glob === null) return [{ ...pathFact(given, value.text, cwd, access, recursive, origin, site, false, used.noFollow), ...extra }];
  const { paths, truncated, base } = globCandidates(value.glob, cwd);
  const facts = paths.map((candidate) => ({ ...pathFact(given, candidate, '/', access, recursive, origin, site, true, used.noFollow), ...extra }));
  // A write through a glob reaches whatever it may match later: its fixed base counts as written whole.
  if (access === 'write') facts.push({ ...pathFact(given, base, '/', 'write', true, `${origin} (glob)`, site, true), ...extra });
  if (truncated !== null) facts.push(unknownPath(given, access, recursive, origin, truncated));
  return facts;
}

/** Where a symlink points (resolved), or null when the path is not a symlink. */
function linkTarget(text: string, cwd: string): string | null {
  const entry = resolveLinkItself(text, cwd);
  try {
    return lstatSync(entry).isSymbolicLink() ? resolvePhysical(entry, '/') : null;
  } catch {
    return null;
  }
}

function uniquePaths(paths: PathFact[]): PathFact[] {
  const seen = new Set<string>();
  return paths.filter((fact) => {
    const key = `${fact.access}\u0000${fact.path ?? fact.given}\u0000${fact.origin}\u0000${fact.recursive}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function unknownPath(given: string, access: Access, recursive: boolean, origin: string, why: string): PathFact {
  return { given, path: null, access, recursive, origin, inside: false, relative: null, secret: false, git: false, tmp: false, device: false, pseudo: false, glob: false, unknown: why };
}

/** Resolves one path and classifies it: inside or outside, secret, git metadata, temp, device. */
export function pathFact(given: string, text: string, cwd: string, access: Access, recursive: boolean, origin: string, site: CallSite, glob: boolean, noFollow = false): PathFact {
  let real: string;
  try {
    // A command that acts on a link itself resolves the directory the link is in, not the link.
    real = noFollow ? resolveLinkItself(text, cwd) : resolvePhysical(text, cwd);
  } catch (error) {
    return unknownPath(given, access, recursive, origin, `cannot resolve it: ${error instanceof Error ? error.message : String(error)}`);
  }
  return classify(given, real, access, recursive, origin, site, glob);
}

export function classify(given: string, real: string, access: Access, recursive: boolean, origin: string, site: CallSite, glob: boolean): PathFact {
  const relative = path.relative(site.worktree, real);
  const inside = relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
  const under = (dir: string): boolean => real === dir || real.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
  // Inside the worktree the fence decides, even where the worktree lies under a scratch dir.
  const tmp = (site.tmpDir !== null && under(site.tmpDir)) || (!inside && site.scratch.some(under));
  return {
    given,
    path: real,
    access,
    recursive,
    origin,
    inside,
    relative: inside ? (relative === '' ? '.' : relative.split(path.sep).join('/')) : null,
    secret: isSecret(real) && !site.exposed.has(real) && !site.harmlessTracked(real),
    git: isGitMetadata(real, site.git),
    tmp,
    device: isDevice(real),
    pseudo: isPseudoDevice(real),
    glob,
  };
}


const WALK_LIMIT = 50_000;

/**
 * Files under `dir` (real paths), for judging a recursive read or write as touching
 * each of them. `.git` contents are left out (a `.git` entry itself is listed) and
 * `node_modules` is skipped. Returns null when there are more than the walk limit.
 */
export function filesUnder(dir: string, skipHidden = false): string[] | null {
  const out: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    for (const entry of dirEntries(current)) {
      if (skipHidden && entry.name.startsWith('.')) continue;
      const full = path.join(current, entry.name);
      if (entry.name === '.git' || entry.name === 'node_modules') {
        out.push(full);
        continue;
      }
      out.push(full);
      if (out.length > WALK_LIMIT) return null;
      if (entry.isDirectory()) stack.push(full);
    }
  }
  return out;
}
