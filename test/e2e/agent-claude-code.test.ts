import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { extraWorktrees, gitIn, repoWithFiles } from '../support/repo.js';

// `agent: claude-code` end to end through the real CLI, with the fake Claude Code of
// test/fixtures/fake-claude.mjs: it speaks stream-json and calls the PreToolUse hook from
// its --settings file as Claude Code does, so every call goes through corral's guard.

const FAKE_CLAUDE = path.join(PROJECT_ROOT, 'test', 'fixtures', 'fake-claude.mjs');

type Step = Record<string, unknown>;

/** A repository whose corral.yaml names the fake CLI, with a ticket and the fake's script. */
function agentRepo(sessions: Step[][], ticket: Record<string, unknown> = {}, extraFiles: Record<string, string> = {}): string {
  const fields = { task: 'Add a greeting.', allow: ['src/**'], agent: 'claude-code', env: { FAKE_AGENT_SCRIPT: 'fake/script.json' }, ...ticket };
  return repoWithFiles({
    'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(FAKE_CLAUDE)}\n`,
    'ticket.yaml': `${JSON.stringify(fields)}\n`,
    'fake/script.json': JSON.stringify({ sessions }),
    'src/greet.js': 'export const greet = () => "hi";\n',
    ...extraFiles,
  });
}

const ENV = { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key-000000', NO_COLOR: '1' };

function traceOf(report: { trace?: string }, repo: string): any[] {
  const file = report.trace ?? '';
  const text = readFileSync(path.isAbsolute(file) ? file : path.join(repo, file), 'utf8');
  return text.trim().split('\n').map((line) => JSON.parse(line));
}

describe('agent: claude-code runs under corral', () => {
  it('passes: the agent writes inside the fence, the checks pass, the branch is kept, the trace records its turns and calls', async () => {
    const repo = agentRepo(
      [[{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'export const hello = "hello";\n' } }, { tool: 'Bash', input: { command: 'cat src/hello.js' } }, { text: 'Added src/hello.js.\nQUEUE: greet.js has no test' }]],
      { checks: ['grep -q hello src/hello.js'] },
    );
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.stderr).not.toContain('internal error');
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.status).toBe('passed');
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['src/hello.js']);
    expect(gitIn(repo, ['show', 'corral/ticket:src/hello.js'])).toContain('hello');
    expect(extraWorktrees(repo)).toEqual([]);
    const events = traceOf(report, repo);
    expect(events.find((e) => e.type === 'agent')).toMatchObject({ kind: 'claude-code', version: '2.1.328' });
    expect(events.filter((e) => e.type === 'model_response').length).toBe(3);
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls.map((c) => c.tool)).toEqual(['Write', 'Bash']);
    const decisions = events.filter((e) => e.type === 'decision');
    expect(decisions.map((d) => d.effect)).toEqual(['allow', 'allow']);
    expect(events.filter((e) => e.type === 'tool_result').map((r) => r.isError)).toEqual([false, false]);
    expect(events.filter((e) => e.type === 'tool_result')[1].output).toContain('hello');
  });
});
