import os from 'node:os';
import path from 'node:path';
import picomatch from 'picomatch';
import type { CallFacts, CommandFact, PathFact } from '../facts.js';
import { UNKNOWN_ARG } from '../unknown-arg.js';
import type { PatternRule } from '../../policy/types.js';

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
    return facts.commands.some((command) => commandMatches(rule.specifier!, command, lenient));
  }
  const paths = pathsForTool(rule.tool, facts);
  if (paths === null) return rule.tool === facts.tool && rule.specifier === null;
  if (rule.specifier === null) return rule.tool === facts.tool || paths.length > 0;
  const matcher = pathMatcher(rule.specifier, home, worktree);
  const under = lenient ? reachesInto(rule.specifier, home, worktree) : () => false;
  // A directory read or written whole (`rg x`, `rm -r src`) touches what a rule names inside it.
  return paths.some((fact) => (fact.path === null ? lenient : matcher(fact.path) || (fact.recursive && under(fact.path))));
}

/** Whether a directory taken whole holds paths the specifier names: the specifier's fixed base lies inside it. */
function reachesInto(specifier: string, home: string | null, worktree: string): (dir: string) => boolean {
  const base = picomatch.scan(absoluteSpecifier(specifier, home, worktree)).base;
  return (dir) => dir === '/' || base === dir || base.startsWith(`${dir}/`);
}

/** The path facts a path rule for `tool` judges: Read rules every read, Edit/Write rules every write. */
function pathsForTool(tool: string, facts: CallFacts): PathFact[] | null {
  if (tool === 'Read') return facts.paths.filter((fact) => fact.access !== 'write');
  if (tool === 'Edit' || tool === 'Write') return facts.paths.filter((fact) => fact.access === 'write');
  if (READ_TOOLS.has(tool) || WRITE_TOOLS.has(tool)) return facts.tool === tool ? facts.paths : [];
  return null;
}

/** A path specifier as an absolute glob: `/abs`, `//abs`, `~/x`, or relative to the worktree root (`./x`, `x`). */
export function pathMatcher(specifier: string, home: string | null, worktree: string): (candidate: string) => boolean {
  const absolute = absoluteSpecifier(specifier, home, worktree);
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
