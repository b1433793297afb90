import type { GuardSandbox } from './facts.js';
import type { Verdict } from './guard.js';

/** The sandbox a verdict was judged for, in a few words. */
export function describeSandbox(sandbox: GuardSandbox): string {
  if (sandbox.kind === 'none') return 'none (the guard is strict: what it cannot prove harmless is asked)';
  return sandbox.network ? 'bwrap with network (what the guard cannot see is asked)' : 'bwrap without network (what it contains is allowed; the fence judges the result)';
}

/** `deny  baseline.secrets (baseline)`: the effect and the deciding rule with its scope and file. */
export function decisionLine(verdict: Verdict): string {
  const { decision } = verdict;
  const where = decision.source ? `${decision.scope}, ${decision.source}` : decision.scope;
  return `${decision.effect}  ${decision.rule} (${where})`;
}

/** The whole verdict for a person: decision, reason, parsed commands, resolved paths, problems. */
export function describeVerdict(verdict: Verdict): string[] {
  const { facts, decision } = verdict;
  const lines = [decisionLine(verdict), `reason: ${decision.reason}`];
  if (facts.commands.length > 0) {
    lines.push('commands:');
    for (const command of facts.commands) {
      const via = command.via.length > 0 ? `  (via ${command.via.join(' > ')})` : '';
      const verdictOf = command.check ? 'ticket check' : command.effects.wrapper ? 'wrapper' : command.effects.known ? 'known' : `not known safe: ${command.effects.why ?? ''}`;
      lines.push(`  ${command.cwd ?? '<unknown dir>'}$ ${command.argv.map(quoteArg).join(' ')}${via}  [${verdictOf}]`);
    }
  }
  if (facts.paths.length > 0) {
    lines.push('paths:');
    for (const fact of facts.paths) {
      const flags = [fact.pseudo ? 'pseudo-device' : fact.inside ? 'inside' : fact.path === null ? 'unknown' : 'outside', fact.secret && 'secret', fact.git && 'git metadata', fact.tmp && 'private tmp', fact.device && 'device', fact.recursive && 'recursive', fact.glob && 'glob'].filter(Boolean);
      lines.push(`  ${fact.access.padEnd(5)} ${fact.path ?? fact.given} <- ${fact.origin} \`${fact.given}\`  [${flags.join(', ')}]${fact.unknown ? ` ${fact.unknown}` : ''}`);
    }
  }
  if (facts.problems.length > 0) {
    lines.push('cannot analyse:');
    for (const problem of facts.problems) lines.push(`  ${problem}`);
  }
  return lines;
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./<>-]+$/.test(arg) ? arg : JSON.stringify(arg);
}

/** The verdict as plain data for `--json`. */
export function verdictJson(verdict: Verdict): Record<string, unknown> {
  const { facts, decision } = verdict;
  return {
    tool: facts.tool,
    input: facts.input,
    decision,
    commands: facts.commands.map((c) => ({ argv: c.argv, cwd: c.cwd, via: c.via, known: c.effects.known, check: c.check, why: c.effects.why ?? null })),
    paths: facts.paths.map((p) => ({ given: p.given, path: p.path, access: p.access, origin: p.origin, inside: p.inside, secret: p.secret, git: p.git, tmp: p.tmp, recursive: p.recursive, glob: p.glob, unknown: p.unknown ?? null })),
    problems: facts.problems,
  };
}
