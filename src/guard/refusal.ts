import type { Decision } from './decide.js';

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
