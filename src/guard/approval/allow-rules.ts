import path from 'node:path';
import type { CommandFact } from '../facts.js';
import { UNKNOWN_ARG } from '../unknown-arg.js';
import { commandMatches, pathMatcher } from '../rules/patterns.js';
import { parsePattern } from '../../policy/pattern-syntax.js';
import { baseName } from '../shell/wrappers.js';
import { cutVisible, makeVisible } from '../../text/visible.js';
import type { ApprovalRequest } from './approver.js';

// What an approval covers and what would allow a call without one: the key "always for
// this run" remembers, and allow patterns checked to match the call they came from.

export function showArgv(argv: string[]): string {
  return argv.map((word) => (/^[A-Za-z0-9_@%+=:,./<>-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** What "always this run" covers, in words. */
export function coverage(request: ApprovalRequest): string {
  const scope = request.decision.rule;
  const prefixes = bashPrefixes(request);
  if (request.tool === 'Bash') {
    if (prefixes === null) return `${scope}, this exact command`;
    return `${scope}, commands ${prefixes.map((words) => `\`${showArgv(words)}${words.length > 1 ? ' …' : ''}\``).join(' and ')}`;
  }
  if (request.paths.length === 0) return `${scope}, this exact call`;
  return `${scope}, ${request.tool} ${request.paths.map((file) => shownPath(file, request.worktree)).join(', ')}`;
}

/**
 * The first two words of each parsed command, sorted and unique; null when a word is only
 * known when it runs, or when the second word is an option: `python3 -c '…'` and
 * `node -e '…'` carry their program in the next word, so only the exact call is covered.
 */
function bashPrefixes(request: ApprovalRequest): string[][] | null {
  if (request.commands.length === 0) return null;
  const prefixes = new Map<string, string[]>();
  for (const argv of request.commands) {
    const words = argv.slice(0, 2);
    if (words.length === 0 || words.includes(UNKNOWN_ARG) || words[1]?.startsWith('-')) return null;
    prefixes.set(JSON.stringify(words), words);
  }
  return [...prefixes.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, words]) => words);
}

/**
 * What "always for this run" remembers: the deciding rule, and for Bash the first two
 * words of each command (`npm install`), for other tools the tool and its paths. A call
 * with a word only known when it runs, or with no command or path, is remembered only as
 * exactly itself.
 */
export function approvalKey(request: ApprovalRequest): string {
  const rule = [request.decision.scope, request.decision.rule, request.tool];
  if (request.tool === 'Bash') {
    const prefixes = bashPrefixes(request);
    // A path outside the worktree is part of what was approved: `cat ../a` covers no other outside file.
    const outside = [...new Set(request.paths.filter((file) => !isInside(path.relative(request.worktree, file))))].sort();
    return JSON.stringify([...rule, prefixes ?? { exact: request.input.command ?? request.input }, outside]);
  }
  if (request.paths.length === 0) return JSON.stringify([...rule, { exact: request.input }]);
  return JSON.stringify([...rule, [...new Set(request.paths)].sort()]);
}

export function shownPath(file: string, worktree: string): string {
  const relative = path.relative(worktree, file);
  return makeVisible(isInside(relative) ? relative || '.' : file);
}

export function isInside(relative: string): boolean {
  return relative !== '..' && !relative.startsWith('../') && !path.isAbsolute(relative);
}

const PATH_TOOLS = new Set(['Read', 'Write', 'Edit', 'Glob', 'Grep']);

export interface AllowPlan {
  rules: string[];
  /** Parts of the call no allow rule can express, and why. */
  gaps: string[];
}

/** Allow rules that match exactly this call, each checked against the real matcher before it is offered. */
export function suggestedAllowRules(request: ApprovalRequest): string[] {
  return planAllowRules(request).rules;
}

export function planAllowRules(request: ApprovalRequest): AllowPlan {
  const plan: AllowPlan = { rules: [], gaps: [] };
  const add = (result: { rule: string } | { gap: string }): void => {
    if ('gap' in result) plan.gaps.push(result.gap);
    else if (!plan.rules.includes(result.rule)) plan.rules.push(result.rule);
  };
  if (request.tool === 'Bash') {
    if (request.commands.length === 0) plan.gaps.push('No allow rule is suggested: no command could be read from this call.');
    for (const argv of request.commands) add(bashRule(argv));
  } else if (PATH_TOOLS.has(request.tool)) {
    if (request.paths.length === 0) plan.gaps.push('No allow rule is suggested: the call names no path.');
    for (const file of request.paths) add(pathRule(request.tool, file, request.worktree));
  } else {
    plan.gaps.push(`No allow rule is suggested for the ${makeVisible(request.tool)} tool.`);
  }
  return plan;
}

const GLOB_SPECIAL = /[\\*?[\]{}()!+@|]/g;

function escapeGlob(text: string): string {
  return text.replace(GLOB_SPECIAL, (char) => `\\${char}`);
}

/** `Bash(<words>)` matching exactly `argv`: words split on whitespace, a word with `*` is a glob (escaped here). */
function bashRule(argv: string[]): { rule: string } | { gap: string } {
  const shown = `\`${cutVisible(showArgv(argv), 120)}\``;
  const gap = (why: string): { gap: string } => ({ gap: `No allow rule is suggested for ${shown}: ${why}.` });
  if (argv.length === 0) return gap('it is empty');
  if (argv.includes(UNKNOWN_ARG)) return gap('part of it is only known when it runs, and an allow rule never covers that');
  // The guard matches a command by its name (basename), so `./build.sh` is `build.sh`.
  const name = baseName(argv[0]!);
  const words = [name, ...argv.slice(1)];
  if (words.some((word) => word === '' || /\s/u.test(word))) return gap('a word in it is empty or holds whitespace, which a pattern cannot express');
  const specifier = words.map((word) => (word.includes('*') ? escapeGlob(word) : word)).join(' ');
  const rule = `Bash(${specifier})`;
  const parsed = parsePattern(rule);
  const fact = { name, argv } as CommandFact;
  if (typeof parsed === 'string' || parsed.tool !== 'Bash' || parsed.specifier !== specifier || !commandMatches(specifier, fact, false)) {
    return gap('a pattern cannot express its words exactly');
  }
  return { rule };
}

/** `Tool(<path>)`: relative to the worktree when inside it, absolute otherwise, glob characters escaped. */
function pathRule(tool: string, file: string, worktree: string): { rule: string } | { gap: string } {
  const relative = path.relative(worktree, file);
  let specifier = isInside(relative) ? relative || '.' : file;
  // `~` starts a home path in a rule; `./` keeps a file named so in the worktree.
  if (specifier === '~' || specifier.startsWith('~/')) specifier = `./${specifier}`;
  specifier = escapeGlob(specifier);
  const rule = `${tool}(${specifier})`;
  const parsed = parsePattern(rule);
  if (typeof parsed === 'string' || parsed.tool !== tool || parsed.specifier !== specifier || !pathMatcher(specifier, null, worktree)(file)) {
    return { gap: `No allow rule is suggested for ${tool} ${cutVisible(file, 120)}: a pattern cannot express that path exactly.` };
  }
  return { rule };
}
