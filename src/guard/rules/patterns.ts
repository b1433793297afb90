import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { CallFacts, CommandFact, PathFact } from '../facts.js';
import { UNKNOWN_ARG } from '../unknown-arg.js';
import type { ClaudeCodeDialect, PatternRule } from '../../policy/types.js';

const READ_TOOLS = new Set(['Read', 'Grep', 'Glob']);
const WRITE_TOOLS = new Set(['Write', 'Edit']);


/**
 * Whether a pattern rule matches a call. A deny or ask rule also matches what it
 * cannot rule out (an argument or path not known before the call runs); an allow rule
 * matches only what it can see.
 */
export function patternMatches(rule: PatternRule, facts: CallFacts, home: string | null, worktree: string): boolean {
  const lenient = rule.effect !== 'allow';
  if (rule.tool === 'Bash') {
    if (facts.tool !== 'Bash') return false;
    if (rule.specifier === null) return true;
    return facts.commands.some((command) => ruleCommandMatches(rule, command, lenient));
  }
  const paths = pathsForTool(rule.tool, facts);
  if (paths === null) return rule.tool === facts.tool && rule.specifier === null;
  if (rule.specifier === null) return rule.tool === facts.tool || paths.length > 0;
  const matcher = pathMatcher(rule.specifier, home, worktree, rule.dialect);
  const under = lenient ? reachesInto(rule.specifier, home, worktree, rule.dialect) : () => false;
  // A directory read or written whole (`rg x`, `rm -r src`) touches what a rule names inside it.
  return paths.some((fact) => (fact.path === null ? lenient : matcher(fact.path) || (fact.recursive && under(fact.path))));
}

/** Whether a directory taken whole holds paths the specifier names: the specifier's fixed base lies inside it. */
function reachesInto(specifier: string, home: string | null, worktree: string, dialect: ClaudeCodeDialect | undefined): (dir: string) => boolean {
  const absolute = dialect ? claudeCodeSpecifier(specifier, home, worktree, dialect) : absoluteSpecifier(specifier, home, worktree);
  const base = picomatch.scan(absolute).base;
  return (dir) => dir === '/' || base === dir || base.startsWith(`${dir}/`);
}

/** The path facts a path rule for `tool` judges: Read rules every read, Edit/Write rules every write. */
function pathsForTool(tool: string, facts: CallFacts): PathFact[] | null {
  if (tool === 'Read') return facts.paths.filter((fact) => fact.access !== 'write');
  if (tool === 'Edit' || tool === 'Write') return facts.paths.filter((fact) => fact.access === 'write');
  if (READ_TOOLS.has(tool) || WRITE_TOOLS.has(tool)) return facts.tool === tool ? facts.paths : [];
  return null;
}

/**
 * A path specifier as an absolute glob. corral's syntax: `/abs`, `//abs`, `~/x`, or
 * relative to the worktree root (`./x`, `x`); Claude Code's: see `claudeCodeSpecifier`.
 */
export function pathMatcher(specifier: string, home: string | null, worktree: string, dialect?: ClaudeCodeDialect): (candidate: string) => boolean {
  const absolute = dialect ? claudeCodeSpecifier(specifier, home, worktree, dialect) : absoluteSpecifier(specifier, home, worktree);
  const exact = picomatch(absolute, { dot: true });
  // A directory named by the rule covers what is inside it.
  const inside = picomatch(`${absolute.replace(/\/+$/, '')}/**`, { dot: true });
  return (candidate) => exact(candidate) || inside(candidate);
}

function absoluteSpecifier(specifier: string, home: string | null, worktree: string): string {
  if (specifier.startsWith('//')) return specifier.slice(1);
  if (specifier.startsWith('/')) return specifier;
  if (specifier === '~' || specifier.startsWith('~/')) return path.join(home ?? os.homedir(), specifier.slice(1));
  return path.join(worktree, specifier.replace(/^\.\//, ''));
}

/**
 * Claude Code's path rules follow gitignore: `//x` is absolute, `~/x` is under home,
 * `/x` is relative to the settings' root (the project root for project settings, the
 * settings file's folder, ~/.claude, for the user's), `./x` is relative to the working directory (the worktree), and a
 * pattern with no slash but a trailing one (`.env`, `*.key`, `build/`) matches at any
 * depth below the working directory.
 */
export function claudeCodeSpecifier(specifier: string, home: string | null, worktree: string, dialect: ClaudeCodeDialect): string {
  const homeDir = home ?? os.homedir();
  if (specifier.startsWith('//')) return specifier.slice(1);
  if (specifier === '~' || specifier.startsWith('~/')) return path.posix.join(homeDir, specifier.slice(1));
  if (specifier.startsWith('/')) return path.posix.join(dialect.root ?? worktree, specifier);
  const relative = specifier.replace(/^(?:\.\/)+/, '');
  if (relative !== specifier || relative.replace(/\/+$/, '').includes('/')) return path.posix.join(worktree, relative);
  return path.posix.join(worktree, '**', relative);
}

/** Whether a Bash rule matches one command, read in the rule's own syntax. */
export function ruleCommandMatches(rule: Pick<PatternRule, 'specifier' | 'dialect'>, command: CommandFact, lenient: boolean): boolean {
  if (rule.specifier === null) return true;
  return rule.dialect ? claudeCodeCommandMatches(rule.specifier, command, lenient) : commandMatches(rule.specifier, command, lenient);
}

/**
 * Claude Code's Bash rules: `npm run test` matches exactly; `*` matches any characters,
 * spaces included, anywhere (`git * main`, `npm run*`); a trailing ` *` (or the older
 * `:*`) also matches the bare command and only at a word boundary (`ls *` is not
 * `lsof`). The command is its words joined by spaces, its name by its basename.
 */
export function claudeCodeCommandMatches(specifier: string, command: CommandFact, lenient: boolean): boolean {
  if (command.argv.length === 0) return false;
  const spec = specifier.endsWith(':*') ? `${specifier.slice(0, -2)} *` : specifier;
  const head = command.argv[0] === UNKNOWN_ARG || command.name === '' ? command.argv[0]! : command.name;
  const words = [head, ...command.argv.slice(1)];
  const unknownAt = words.indexOf(UNKNOWN_ARG);
  if (unknownAt !== -1) {
    // A word known only when it runs could be anything: a deny or ask rule matches when
    // the known words before it agree with the rule's fixed start; an allow rule never.
    if (!lenient) return false;
    const known = words.slice(0, unknownAt).join(' ');
    const fixed = spec.split('*')[0]!;
    return known.startsWith(fixed) || fixed.startsWith(known);
  }
  return claudeCodeCommandRegExp(spec).test(words.join(' '));
}

function claudeCodeCommandRegExp(spec: string): RegExp {
  const boundary = spec.endsWith(' *') && spec.length > 2;
  const body = boundary ? spec.slice(0, -2) : spec;
  const source = body
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\s+/g, '\\s+'))
    .join('.*');
  return new RegExp(`^${source}${boundary ? '(?:\\s.*)?' : ''}$`, 's');
}

/**
 * `git push:*` and `git push *` match argv starting with `git push`; `npm test` matches
 * exactly; `*` inside a word matches any characters. The command name also matches by
 * its basename, so `/usr/bin/git` is `git`.
 */
export function commandMatches(specifier: string, command: CommandFact, lenient: boolean): boolean {
  if (command.argv.length === 0) return false;
  let spec = specifier;
  let prefix = false;
  if (spec.endsWith(':*')) {
    spec = spec.slice(0, -2);
    prefix = true;
  } else if (spec.endsWith(' *')) {
    spec = spec.slice(0, -2);
    prefix = true;
  }
  const wanted = spec.split(/\s+/).filter((word) => word !== '');
  // A name known only when it runs (`$(echo rm) x`) may be any command: it stays unknown.
  const head = command.argv[0] === UNKNOWN_ARG || command.name === '' ? command.argv[0]! : command.name;
  const argv = [head, ...command.argv.slice(1)];
  if (argv.length < wanted.length) return false;
  if (!prefix && argv.length !== wanted.length && !(lenient && argv.includes(UNKNOWN_ARG))) return false;
  return wanted.every((word, index) => {
    const actual = argv[index]!;
    if (actual === UNKNOWN_ARG) return lenient;
    return word.includes('*') ? picomatch.isMatch(actual, word, { dot: true, bash: true }) : word === actual;
  });
}
