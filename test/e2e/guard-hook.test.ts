import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { serveGuard } from '../../src/agents/guard-socket.js';
import { NO_USER_CONFIG, PROJECT_ROOT } from '../support/cli.js';
import { preloadProbe } from '../support/probe.js';
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

  it("judges as without a sandbox: the agent's own session runs its commands on the host", async () => {
    // A run here would contain these in bubblewrap (the config says so, whether or not it
    // works on this machine); the agent's own session does not, so none may pass as contained.
    const repo = repoWithFiles({ 'corral.yaml': 'sandbox: bwrap\n', 'src/a.js': 'x\n' });
    const call = (command: string) => ({ hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command }, tool_use_id: 't', cwd: repo });
    for (const [command, effect] of [
      ['kill -9 1', 'deny'],
      ['echo x > /tmp/corral-hook-outside', 'deny'],
      ['curl https://example.com', 'ask'],
    ] as const) {
      const { answer } = await hook(repo, 'claude-code', call(command));
      expect({ command, effect: answer.permissionDecision }).toEqual({ command, effect });
      expect(answer.permissionDecisionReason).not.toMatch(/sandbox/i);
    }
  });

  it('inside a run whose socket is gone, it denies rather than judge alone', async () => {
    const repo = repoWithFiles({ 'src/a.js': 'x\n' });
    const answer = await hook(repo, 'claude-code', { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't' }, { CORRAL_GUARD_SOCKET: path.join(repo, 'no.sock') });
    expect(answer.answer.permissionDecision).toBe('deny');
  });

  it("inside a run, it hands the call to the run's socket without loading the guard's own code", async () => {
    // An agent inside corral waits for this process on every tool call: it only forwards.
    // A probe in the hook's process lists the CLI's chunks it reads.
    const repo = repoWithFiles({ 'src/a.js': 'x\n' });
    const probe = preloadProbe('corral-hook-chunks-', (dir) => [
      `const fs = require('node:fs');`,
      `const readFileSync = fs.readFileSync;`,
      `const chunks = [];`,
      `fs.readFileSync = function (file, ...rest) { if (typeof file === 'string' && file.includes('dist/bundle/')) chunks.push(require('node:path').basename(file)); return readFileSync.call(this, file, ...rest); };`,
      `process.on('exit', () => fs.writeFileSync(${JSON.stringify(path.join(dir, 'read.json'))}, JSON.stringify(chunks)));`,
    ]);
    const { dir } = probe;
    const asked: unknown[] = [];
    const server = await serveGuard(path.join(dir, 'guard.sock'), async (request) => {
      asked.push(request);
      return { effect: 'allow', reason: 'the run allows it' };
    });
    try {
      const answer = await hook(repo, 'claude-code', { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: 't' }, { CORRAL_GUARD_SOCKET: path.join(dir, 'guard.sock'), NODE_OPTIONS: probe.nodeOptions });
      expect(answer.answer).toMatchObject({ permissionDecision: 'allow', permissionDecisionReason: 'the run allows it' });
    } finally {
      await server.close();
    }
    expect(asked).toHaveLength(1);
    const chunks = (JSON.parse(readFileSync(path.join(dir, 'read.json'), 'utf8')) as string[]).filter((name) => name.endsWith('.cjs'));
    expect(chunks.some((name) => name.startsWith('guard-hook-'))).toBe(true);
    // The guard (its decision, the call pipeline, the repository's settings) stays unread.
    expect(chunks.filter((name) => /^(call-pipeline|dry-run|guard)-/.test(name) && !name.startsWith('guard-hook-'))).toEqual([]);
  });
});
