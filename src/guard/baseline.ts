import path from 'node:path';
import picomatch from 'picomatch';
import { pathGlob } from '../text/path-glob.js';
import type { CallFacts, CallSite, PathFact } from './facts.js';
import { HISTORY_ORIGIN } from './commands/git.js';
import { classify, containedBySandbox, filesUnder } from './facts.js';
import { HIDDEN_SKIPPED } from './commands/search.js';
import { whitelistingIgnoreFile } from './paths/ignore-files.js';
import { resolvePhysical } from './paths/resolve.js';
import type { BuiltInRule } from '../policy/rule-ids.js';

/** One finding of the baseline's hard limits, with the rule id the decision names. */
export interface Finding {
  effect: 'deny' | 'ask';
  rule: BuiltInRule;
  reason: string;
}


export interface Fence {
  allow: string[];
  forbid: string[];
}

/** Checks every fact against the hard limits and the ticket's fence. Reads the file system only to list a directory a recursive call takes whole. */
export function baselineFindings(facts: CallFacts, site: CallSite, judge: FenceJudge): Finding[] {
  const findings: Finding[] = [];
  const contained = containedBySandbox(facts, site);
  for (const command of facts.commands) {
    for (const hazard of command.effects.hazards) {
      if (contained && hazard.contained) continue;
      findings.push({ effect: 'deny', rule: hazard.rule, reason: `${hazard.reason}: ${command.argv.join(' ')}` });
    }
  }
  const downloader = facts.commands.find((command) => command.effects.role === 'downloader');
  const interpreter = facts.commands.find((command) => command.effects.role === 'interpreter');
  if (downloader && interpreter) {
    findings.push({ effect: 'deny', rule: 'baseline.download-exec', reason: `\`${downloader.name}\` and \`${interpreter.name}\` in one call can run what was downloaded` });
  }
  for (const fact of facts.paths) findings.push(...pathFindings(fact, site, judge, contained));
  // What cannot be analysed is confined like any unknown program; a deny or ask rule of the
  // policy still matches what it cannot rule out (decide.ts), and the fence judges the tree.
  if (!contained) for (const problem of facts.problems) findings.push({ effect: 'ask', rule: 'baseline.unanalysable', reason: problem });
  return findings;
}

/** The fence at the moment of writing: forbid beats allow. Returns why a relative path may not be written, or null. */
/** Why a relative path may not be written (`whole`: a folder written with all under it), or null. */
export type FenceJudge = (relative: string, whole?: boolean) => { rule: BuiltInRule; reason: string } | null;

/** The fence compiled once per guard: forbid beats allow. */
export function fenceJudge(fence: Fence): FenceJudge {
  const allow = fence.allow.map((glob) => ({ glob, match: pathGlob(glob) }));
  const forbid = fence.forbid.map((glob) => ({ glob, match: pathGlob(glob) }));
  // A directory that allowed files live under may be created.
  const allowBases = fence.allow.map((glob) => picomatch.scan(glob).base).filter((base) => base !== '');
  const forbidBases = fence.forbid.map((glob) => ({ glob, base: picomatch.scan(glob).base }));
  return (relative, whole = false) => {
    // Written whole (rm -r, a glob's reach): any forbidden tree that can lie under it counts.
    if (whole) {
      const reach = forbidBases.find((f) => relative === '.' || f.base === '' || f.base === relative || f.base.startsWith(`${relative}/`));
      if (reach) return { rule: 'fence.forbidden', reason: `${relative} holds paths the ticket's forbid glob ${reach.glob} covers` };
    }
    const forbidden = forbid.find((f) => f.match(relative));
    if (forbidden) return { rule: 'fence.forbidden', reason: `${relative} matches the ticket's forbid glob ${forbidden.glob}` };
    if (allow.some((a) => a.match(relative))) return null;
    if (allowBases.some((base) => base === relative || base.startsWith(`${relative}/`))) return null;
    return { rule: 'fence.outside-allow', reason: `${relative} matches none of the ticket's allow globs` };
  };
}

function pathFindings(fact: PathFact, site: CallSite, judge: FenceJudge, contained: boolean): Finding[] {
  if (fact.path === null) {
    return fact.access === 'list' || contained ? [] : [{ effect: 'ask', rule: 'baseline.unanalysable', reason: `the path of a ${fact.origin} is not known before it runs (${fact.unknown})` }];
  }
  const findings: Finding[] = [];
  if (fact.access === 'read' || fact.access === 'exec') {
    if (fact.secret) findings.push({ effect: 'deny', rule: 'baseline.secrets', reason: `${shown(fact)} holds secrets` });
    // Inside the sandbox the worktree's secret files are masked and the home is private:
    // a directory read whole finds them empty. What git prints from its objects is not masked.
    else if (fact.recursive && (!contained || fact.origin === HISTORY_ORIGIN)) {
      const { secret, linkOut } = readWhole(fact, site);
      if (secret !== null) findings.push({ effect: 'deny', rule: 'baseline.secrets', reason: `${shown(fact)} is read whole and holds ${secret}` });
      else if (linkOut !== null) findings.push({ effect: 'ask', rule: 'baseline.unanalysable', reason: `${shown(fact)} holds a symlink the command follows out of the worktree, to ${linkOut}` });
    }
  }
  if (fact.access === 'write') {
    // The directory itself first: a recursive write to `/` needs no walk to be refused.
    const finding = writeFinding(fact, judge) ?? (fact.recursive ? scratchTreeFinding(fact, site) ?? firstFinding(subtree(fact, site), judge) : null);
    if (finding !== null) findings.push(finding);
  }
  return findings;
}

function writeFinding(fact: PathFact, judge: FenceJudge): Finding | null {
  if (fact.pseudo || fact.path === null) return null;
  if (fact.device) return { effect: 'deny', rule: 'baseline.device-write', reason: `${shown(fact)} is a device or kernel file` };
  if (fact.git) return { effect: 'deny', rule: 'baseline.git-metadata', reason: `${shown(fact)} is git metadata, which belongs to the harness` };
  if (fact.tmp) return null;
  if (!fact.inside) return { effect: 'deny', rule: 'baseline.write-outside', reason: `${shown(fact)} is outside the worktree` };
  if (fact.relative === '.') return { effect: 'deny', rule: 'fence.outside-allow', reason: 'the whole worktree is written' };
  const verdict = judge(fact.relative!, fact.recursive);
  return verdict === null ? null : { effect: 'deny', rule: verdict.rule, reason: verdict.reason };
}

/**
 * A scratch dir of the sandbox (/tmp, $HOME) written whole reaches the worktree only when
 * the worktree lies under it, and then all of it: no walk of the machine's /tmp is needed.
 * Returns undefined where the walk decides.
 */
function scratchTreeFinding(fact: PathFact, site: CallSite): Finding | null | undefined {
  const dir = fact.path;
  if (dir === null || !fact.tmp || site.scratch.length === 0) return undefined;
  if (site.tmpDir !== null && (dir === site.tmpDir || dir.startsWith(`${site.tmpDir}/`))) return undefined;
  return site.worktree.startsWith(dir === '/' ? '/' : `${dir}/`) ? { effect: 'deny', rule: 'fence.outside-allow', reason: `${shown(fact)} holds the worktree, which it would write whole` } : null;
}

function firstFinding(facts: PathFact[], judge: FenceJudge): Finding | null {
  for (const fact of facts) {
    const finding = writeFinding(fact, judge);
    if (finding !== null) return finding;
  }
  return null;
}

function subtree(fact: PathFact, site: CallSite): PathFact[] {
  const files = filesUnder(fact.path!);
  if (files === null) return [{ ...fact, path: null, unknown: 'too many files under it to check' }];
  return files.map((file) => classify(fact.given, fact.followsLinks ? followed(file) : file, 'write', false, fact.origin, site, fact.glob));
}

/**
 * One walk of a directory read whole: the first secret in it (or the home directory, or
 * a secret git tracks for a history read), and, when the command follows symlinks, the
 * first place outside the worktree a link in it leads to. rg skips hidden files unless
 * told otherwise or an ignore file whitelists one; --include and --exclude narrow the walk.
 */
function readWhole(fact: PathFact, site: CallSite): { secret: string | null; linkOut: string | null } {
  const dir = fact.path!;
  const none = { secret: null, linkOut: null };
  const home = site.env.HOME;
  if (!fact.inside && home !== undefined && (home === dir || home.startsWith(dir === '/' ? '/' : dir + path.sep))) return { secret: `the home directory ${home}`, linkOut: null };
  if (fact.origin.startsWith('Grep tool')) return none; // the Grep tool itself skips secret files
  if (fact.origin === HISTORY_ORIGIN) {
    const tracked = site.trackedSecrets().find((file) => file === dir || file.startsWith(dir === '/' ? '/' : `${dir}${path.sep}`));
    return { secret: tracked === undefined ? null : `${path.relative(site.worktree, tracked) || tracked}, a secret git tracks`, linkOut: null };
  }
  // Hidden files count as skipped only while no ignore file the search obeys can whitelist one.
  const whitelist = fact.origin.includes(HIDDEN_SKIPPED) ? whitelistingIgnoreFile(dir, site.git.dirs.map((gitDir) => path.join(gitDir, 'info', 'exclude')), site.env) : null;
  const files = filesUnder(dir, fact.origin.includes(HIDDEN_SKIPPED) && whitelist === null);
  if (files === null) return { secret: 'more files than the guard can check', linkOut: null };
  const only = fact.only === undefined ? null : picomatch(fact.only, { dot: true, basename: true });
  const except = fact.except === undefined ? null : picomatch(fact.except, { dot: true });
  let linkOut: string | null = null;
  for (const file of files) {
    if (only !== null && !only(file)) continue;
    if (except !== null && path.relative(dir, file).split(path.sep).some((part) => except(part))) continue;
    const real = fact.followsLinks ? followed(file) : file;
    const item = classify(fact.given, real, 'read', false, fact.origin, site, false);
    if (item.secret) return { secret: `${path.relative(site.worktree, file) || file}${whitelist === null ? '' : ` (hidden files are not skipped: ${path.relative(site.worktree, whitelist) || whitelist} can whitelist them)`}`, linkOut: null };
    if (linkOut === null && fact.inside && real !== file && !item.inside && !item.tmp && !item.pseudo) linkOut = real;
  }
  return { secret: null, linkOut };
}

/** Whether a directory read whole holds a secret (which the sandbox masks) or a link out of the worktree. */
export function readWholeNeedsSandbox(fact: PathFact, site: CallSite): boolean {
  if (fact.path === null) return false;
  const { secret, linkOut } = readWhole(fact, site);
  return secret !== null || linkOut !== null;
}

/** Where a file under a directory taken whole really is, when the command follows symlinks. */
function followed(file: string): string {
  try {
    return resolvePhysical(file, '/');
  } catch {
    return file;
  }
}

function shown(fact: PathFact): string {
  return fact.relative ?? fact.path ?? fact.given;
}
