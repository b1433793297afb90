import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/trace/events.js';
import { dryRunGuard } from '../../src/run/dry-run.js';
import { replayDecisions } from '../../src/run/replay-decisions.js';
import { repoWithFiles } from '../support/repo.js';

function call(id: string, tool: string, input: unknown, decision: { effect: 'allow' | 'ask' | 'deny'; rule: string; scope: string }): RunEvent[] {
  return [
    { type: 'tool_call', step: 1, id, tool, input },
    { type: 'decision', step: 1, id, tool, ...decision, reason: 'recorded', commands: [], paths: [] },
  ];
}

describe('replaying recorded decisions', () => {
  it('leaves alone what the guard did not decide (a hook, an interrupt) and judges an invalid call as the run did', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-replay-decisions-');
    const guard = await dryRunGuard(undefined, repo, { PATH: process.env.PATH ?? '/usr/bin:/bin', XDG_CONFIG_HOME: '/nonexistent' }, 'none');
    const lines = [
      ...call('1', 'Bash', { command: 'echo blocked-by-hook' }, { effect: 'deny', rule: 'hook.PreToolUse', scope: 'hook' }),
      ...call('2', 'Read', { nope: 1 }, { effect: 'deny', rule: 'tool.invalid-call', scope: 'baseline' }),
      ...call('3', 'Frobnicate', {}, { effect: 'deny', rule: 'baseline.unknown-tool', scope: 'baseline' }),
      ...call('4', 'Bash', { command: 'ls' }, { effect: 'deny', rule: 'run.interrupted', scope: 'baseline' }),
      ...call('5', 'Bash', { command: 'ls' }, { effect: 'allow', rule: 'baseline.read-only', scope: 'baseline' }),
      ...call('6', 'Bash', { command: 'npm install' }, { effect: 'allow', rule: 'Bash(npm:*)', scope: 'project' }),
    ];
    const result = await replayDecisions(lines, guard);
    expect(result).toMatchObject({ calls: 4, undecided: 2, otherRule: [] });
    expect(result.changed.map((change) => [change.id, change.then.effect, change.now.effect, change.now.rule])).toEqual([['6', 'allow', 'ask', 'default']]);
  });
});
