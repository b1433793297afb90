import path from 'node:path';

export type Effect = 'allow' | 'ask' | 'deny';

/** A decision on one tool call, always naming the rule that made it. */
export interface Decision {
  effect: Effect;
  rule: string;
  reason: string;
}

/** A parsed tool call with its paths already resolved (file-system facts come in as inputs). */
export interface CallToDecide {
  tool: string;
  /** Real absolute paths the call names. */
  resolvedPaths: string[];
}

/**
 * PLACEHOLDER until the guard lands (issue "The guard"): the one check that keeps file
 * tools inside the worktree and out of its git metadata. Bash commands are not analysed
 * yet; the guard replaces this function with parsed commands and rules.
 */
export function decideCall(call: CallToDecide, worktree: string): Decision {
  for (const resolved of call.resolvedPaths) {
    const relative = path.relative(worktree, resolved);
    const outside = relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative);
    if (outside) {
      return {
        effect: 'deny',
        rule: 'placeholder.outside-worktree',
        reason: `${resolved} is outside the worktree; tools may only touch files inside it`,
      };
    }
    if (relative.split(path.sep)[0] === '.git') {
      return { effect: 'deny', rule: 'placeholder.git-metadata', reason: 'git metadata belongs to the harness' };
    }
  }
  return { effect: 'allow', rule: 'placeholder.inside-worktree', reason: 'every path is inside the worktree' };
}

/** What the model is told when a call is refused: a rule, not a glitch, and what to do next. */
export function refusalText(decision: Decision): string {
  const verdict = decision.effect === 'deny' ? 'denied' : 'refused (it needed approval and none was given)';
  return [
    `This call was ${verdict} by corral's policy.`,
    `Rule: ${decision.rule}. Reason: ${decision.reason}.`,
    'This is a rule, not a glitch: do not retry the same call.',
    'Find another way that stays within the rules, or finish and say what a person must do.',
  ].join('\n');
}
