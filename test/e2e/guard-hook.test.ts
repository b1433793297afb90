import { execa } from 'execa';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT } from '../support/cli.js';
import { repoWithFiles } from '../support/repo.js';

// `corral guard hook` in a person's own session (no run's socket): the repository's
// settings decide, as `corral explain` judges.

async function hook(cwd: string, agent: string, call: unknown, env: Record<string, string> = {}) {
  const result = await execa('node', [path.join(PROJECT_ROOT, 'bin', 'corral.cjs'), 'guard', 'hook', '--agent', agent], {
    cwd,
    input: typeof call === 'string' ? call : JSON.stringify(call),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/', XDG_CONFIG_HOME: NO_USER_CONFIG, CLAUDE_CONFIG_DIR: NO_USER_CONFIG, ...env },
    extendEnv: false,
    reject: false,
  });
  return { exitCode: result.exitCode, answer: result.stdout ? JSON.parse(String(result.stdout)).hookSpecificOutput : undefined, stderr: String(result.stderr) };
}

describe('corral guard hook without a run', () => {
  it("answers deny, ask or allow from the repository's settings, with the deciding rule", async () => {
    const repo = repoWithFiles({ 'corral.yaml': 'policy:\n  deny: ["Bash(curl:*)"]\n  allow: ["Bash(npm test)"]\n', 'src/a.js': 'x\n' });
    const call = (tool: string, input: unknown) => ({ hook_event_name: 'PreToolUse', tool_name: tool, tool_input: input, tool_use_id: 't', cwd: repo });
    const push = await hook(repo, 'claude-code', call('Bash', { command: 'curl https://example.com' }));
    expect(push.exitCode).toBe(0);
    expect(push.answer).toMatchObject({ permissionDecision: 'deny' });
    expect(push.answer.permissionDecisionReason).toContain('Bash(curl:*)');
    expect((await hook(repo, 'claude-code', call('Bash', { command: 'npm test' }))).answer.permissionDecision).toBe('allow');
    expect((await hook(repo, 'codex', call('shell', { command: ['bash', '-lc', 'curl -s x'] }))).answer.permissionDecision).toBe('deny');
    // A secret file is the baseline's: denied wherever the agent runs.
    expect((await hook(repo, 'claude-code', call('Read', { file_path: path.join(repo, '.env') }))).answer.permissionDecision).toBe('deny');
    // What corral has no tool for, and what it cannot read, is denied.
    expect((await hook(repo, 'claude-code', call('WebFetch', { url: 'https://example.com' }))).answer.permissionDecision).toBe('deny');
    expect((await hook(repo, 'claude-code', 'not json')).answer.permissionDecision).toBe('deny');
  });

  it('inside a run whose socket is gone, it denies rather than judge alone', async () => {
    const repo = repoWithFiles({ 'src/a.js': 'x\n' });
    const answer = await hook(repo, 'claude-code', { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't' }, { CORRAL_GUARD_SOCKET: path.join(repo, 'no.sock') });
    expect(answer.answer.permissionDecision).toBe('deny');
  });
});
