import type { CallFacts } from '../facts.js';

export interface TicketContext {
  id: string;
  labels: string[];
  allow: string[];
  forbid: string[];
}

/**
 * What a CEL condition sees: `tool`, `args` (the tool input), `commands` (name, argv,
 * cwd, via, check), `paths` (path, relative, access, inside, secret, git, tmp,
 * recursive, known), `problems`, and `ticket` (id, labels, allow, forbid).
 */
export function conditionContext(facts: CallFacts, ticket: TicketContext): Record<string, unknown> {
  return {
    tool: facts.tool,
    args: facts.input,
    commands: facts.commands.map((command) => ({
      name: command.name,
      argv: command.argv,
      cwd: command.cwd ?? '',
      via: command.via,
      check: command.check,
    })),
    paths: facts.paths.map((fact) => ({
      path: fact.path ?? '',
      relative: fact.relative ?? '',
      given: fact.given,
      access: fact.access,
      inside: fact.inside,
      secret: fact.secret,
      git: fact.git,
      tmp: fact.tmp,
      recursive: fact.recursive,
      known: fact.path !== null,
    })),
    problems: facts.problems,
    ticket: { id: ticket.id, labels: ticket.labels, allow: ticket.allow, forbid: ticket.forbid },
  };
}

/**
 * Evaluates a rule's condition. A condition that fails to evaluate, or gives anything
 * but a boolean, counts as matching for deny and ask and as not matching for allow:
 * a broken rule never loosens a decision.
 */
export function conditionHolds(evaluate: (context: Record<string, unknown>) => unknown, context: Record<string, unknown>, effect: 'allow' | 'ask' | 'deny'): { holds: boolean; error?: string } {
  try {
    const value = evaluate(context);
    if (typeof value === 'boolean') return { holds: value };
    return { holds: effect !== 'allow', error: `the condition gave ${typeof value}, not a boolean` };
  } catch (error) {
    return { holds: effect !== 'allow', error: error instanceof Error ? error.message.split('\n')[0]! : String(error) };
  }
}
