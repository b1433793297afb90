import { baselineFindings, readWholeNeedsSandbox, type FenceJudge, type Finding } from './baseline.js';
import { containedBySandbox, type CallFacts, type CallSite, type CommandFact, type PathFact } from './facts.js';
import { conditionContext, conditionHolds, type TicketContext } from './rules/expressions.js';
import { pathMatcher, patternMatches, ruleCommandMatches } from './rules/patterns.js';
import type { Decision, PatternRule, Policy, Rule, Scope } from '../policy/types.js';
import type { Effect } from '../trace/records.js';
import type { BuiltInRule } from '../policy/rule-ids.js';

export type { Decision } from '../policy/types.js';
export type { Effect } from '../trace/records.js';

export interface DecideContext {
  site: CallSite;
  policy: Policy;
  /** The ticket's fence, compiled once per guard. */
  fence: FenceJudge;
  ticket: TicketContext;
}

/** A rule that matched the call. */
interface Match {
  effect: Effect;
  rule: string;
  scope: Scope;
  reason: string;
  source?: string;
}

const SCOPE_ORDER: Scope[] = ['baseline', 'user', 'project', 'ticket'];

/**
 * Decides one call from its facts. Deny beats ask beats allow; within an effect the
 * first rule (baseline, then user, project, ticket, each in file order) is reported.
 * A call is allowed only when every command and every path it touches is covered: by
 * the baseline's known-safe commands and in-fence writes, by the ticket's checks, or by
 * an allow rule. Otherwise the policy's default effect decides.
 */
export function decide(facts: CallFacts, context: DecideContext): Decision {
  const { site, policy } = context;
  const home = site.env.HOME ?? null;
  const matches: Match[] = baselineFindings(facts, site, context.fence).map((finding: Finding) => ({ ...finding, scope: finding.rule.startsWith('fence.') ? 'ticket' : 'baseline' }));
  let conditionContextValue: Record<string, unknown> | undefined;
  const allowRules: Rule[] = [];
  for (const rule of sortedRules(policy.rules)) {
    if (rule.effect === 'allow') {
      allowRules.push(rule);
      continue;
    }
    if (rule.kind === 'pattern') {
      if (patternMatches(rule, facts, home, site.worktree)) matches.push(fromRule(rule, rule.reason));
    } else {
      conditionContextValue ??= conditionContext(facts, context.ticket);
      const result = conditionHolds(rule.evaluate, conditionContextValue, rule.effect);
      if (result.holds) matches.push(fromRule(rule, result.error ? `${rule.reason} (the condition could not be evaluated: ${result.error})` : rule.reason));
    }
  }
  for (const effect of ['deny', 'ask'] as const) {
    const first = matches.filter((match) => match.effect === effect).sort((a, b) => SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope))[0];
    if (first) return toDecision(first);
  }

  // Nothing denies or asks: the call is allowed if every part of it is covered.
  for (const rule of allowRules) {
    if (rule.kind !== 'expression') continue;
    conditionContextValue ??= conditionContext(facts, context.ticket);
    if (conditionHolds(rule.evaluate, conditionContextValue, 'allow').holds) return toDecision(fromRule(rule, rule.reason));
  }
  const patterns = allowRules.filter((rule): rule is PatternRule => rule.kind === 'pattern');
  const coverage = cover(facts, context, patterns, home);
  if (coverage.uncovered === null) return toDecision(coverage.by);
  return {
    effect: policy.defaultEffect,
    rule: 'default' satisfies BuiltInRule,
    scope: 'default',
    reason: `${coverage.uncovered}; no rule allows it, so the default (${policy.defaultEffect}) applies`,
  };
}

function sortedRules(rules: Rule[]): Rule[] {
  return [...rules].sort((a, b) => SCOPE_ORDER.indexOf(a.scope) - SCOPE_ORDER.indexOf(b.scope));
}

function fromRule(rule: Rule, reason: string): Match {
  return { effect: rule.effect, rule: rule.id, scope: rule.scope, reason: reason || `matches ${rule.id}`, ...(rule.source ? { source: rule.source } : {}) };
}

function toDecision(match: Match): Decision {
  return { effect: match.effect, rule: match.rule, scope: match.scope, reason: match.reason, ...(match.source ? { source: match.source } : {}) };
}

interface Coverage {
  /** Why some part is not covered; null when all of it is. */
  uncovered: string | null;
  by: Match;
}

const READ_ONLY: Match = { effect: 'allow', rule: 'baseline.read-only' satisfies BuiltInRule, scope: 'baseline', reason: 'it only reads and lists inside the worktree' };
const FENCED_WRITE: Match = { effect: 'allow', rule: 'baseline.fenced-write' satisfies BuiltInRule, scope: 'baseline', reason: "it only reads inside the worktree and writes inside the ticket's allow globs" };
const CHECKS: Match = { effect: 'allow', rule: 'ticket.checks' satisfies BuiltInRule, scope: 'ticket', reason: "it runs the ticket's own checks" };
const CONTAINED: Match = {
  effect: 'allow',
  rule: 'sandbox.contained' satisfies BuiltInRule,
  scope: 'baseline',
  reason: 'it runs in the bubblewrap sandbox without network, which confines what it does to the worktree and private dirs; the fence judges the result',
};

function cover(facts: CallFacts, context: DecideContext, allowRules: PatternRule[], home: string | null): Coverage {
  const used = new Set<Match>();
  const contained = containedBySandbox(facts, context.site);
  // What the baseline let pass only because the sandbox confines it is reported as such.
  if (contained && reliesOnSandbox(facts, context.site)) used.add(CONTAINED);
  let writes = false;
  const ruleCovering = (test: (rule: PatternRule) => boolean): Match | null => {
    const rule = allowRules.find(test);
    return rule ? fromRule(rule, rule.reason) : null;
  };
  for (const command of facts.commands) {
    if (command.effects.wrapper && command.effects.why === undefined) continue;
    if (command.check) {
      used.add(CHECKS);
      continue;
    }
    if (command.effects.known) continue;
    // An allow rule covers only what it can see: not a command with an argument known only when it runs.
    const rule = command.unknownArgs.length > 0 ? null : ruleCovering((r) => r.tool === 'Bash' && ruleCommandMatches(r, command, false));
    if (rule) {
      used.add(rule);
      continue;
    }
    if (contained) {
      used.add(CONTAINED);
      continue;
    }
    return { uncovered: describeCommand(command), by: READ_ONLY };
  }
  const judge = context.fence;
  for (const fact of facts.paths) {
    if (pathCovered(fact, judge)) {
      if (fact.access === 'write' && !fact.pseudo) writes = true;
      continue;
    }
    const rule = ruleCovering((r) => pathRuleCovers(r, fact, facts.tool, home, context.site.worktree));
    if (rule) {
      used.add(rule);
      continue;
    }
    // Reads the sandbox shows are what it lets be read (credentials, the home and the
    // worktree's secrets are out of view); unknown paths are confined like unknown programs.
    if (contained && (fact.path === null || fact.access !== 'write')) {
      used.add(CONTAINED);
      continue;
    }
    return { uncovered: describePath(fact), by: READ_ONLY };
  }
  const ruled = [...used].find((match) => match !== CHECKS && match !== CONTAINED) ?? (used.has(CONTAINED) ? CONTAINED : undefined);
  const by = ruled ?? (used.has(CHECKS) ? CHECKS : writes ? FENCED_WRITE : READ_ONLY);
  return { uncovered: null, by };
}

/** Parts the guard could not analyse, or writes that land in the sandbox's private /tmp or $HOME. */
function reliesOnSandbox(facts: CallFacts, site: CallSite): boolean {
  if (facts.problems.length > 0) return true;
  if (facts.commands.some((command) => command.effects.hazards.some((hazard) => hazard.contained))) return true;
  const tmpDir = site.tmpDir;
  const inRunTmp = (p: string): boolean => tmpDir !== null && (p === tmpDir || p.startsWith(`${tmpDir}/`));
  return facts.paths.some((fact) => fact.path === null || (fact.tmp && !inRunTmp(fact.path)) || (fact.recursive && fact.access === 'read' && fact.inside && readWholeNeedsSandbox(fact, site)));
}

function pathCovered(fact: PathFact, judge: FenceJudge): boolean {
  if (fact.path === null) return false;
  if (fact.pseudo) return true;
  if (fact.access === 'write') return fact.tmp || (fact.inside && !fact.git && fact.relative !== '.' && judge(fact.relative!) === null);
  // Listing a secret's name is not reading it.
  return (fact.inside || fact.tmp) && (fact.access === 'list' || !fact.secret) && !fact.git;
}

function pathRuleCovers(rule: PatternRule, fact: PathFact, tool: string, home: string | null, worktree: string): boolean {
  if (fact.path === null) return false;
  const applies = fact.access === 'write' ? rule.tool === 'Edit' || rule.tool === 'Write' : rule.tool === 'Read' || rule.tool === tool;
  if (!applies) return false;
  return rule.specifier === null || pathMatcher(rule.specifier, home, worktree, rule.dialect)(fact.path);
}

function describeCommand(command: CommandFact): string {
  const text = command.argv.join(' ');
  return `\`${text.length > 80 ? `${text.slice(0, 77)}...` : text}\`: ${command.effects.why ?? 'not known to be safe'}`;
}

function describePath(fact: PathFact): string {
  const where = fact.path ?? fact.given;
  if (fact.path === null) return `the ${fact.origin} ${fact.given} is not known (${fact.unknown})`;
  if (fact.git) return `${fact.origin} ${where} is git metadata`;
  if (!fact.inside) return `${fact.origin} ${where} is outside the worktree`;
  return `${fact.origin} ${fact.relative ?? where} is not covered`;
}
