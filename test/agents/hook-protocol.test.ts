import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { judgeAgentCall, runGuardHook } from '../../src/agents/guard-hook.js';
import { askGuard, serveGuard } from '../../src/agents/guard-socket.js';
import { formatHookAnswer, mapAgentCall, parseHookInput, patchPaths, type CorralCall, type HookAnswer } from '../../src/agents/hook-protocol.js';
import { tempDir } from '../support/repo.js';

describe('an agent call said as corral calls', () => {
  it("maps Claude Code's tools to corral's, keeping only the fields corral's tools know", () => {
    expect(mapAgentCall('claude-code', 'Bash', { command: 'ls', description: 'list', run_in_background: true, timeout: 5000 })).toEqual({ kind: 'calls', calls: [{ tool: 'Bash', input: { command: 'ls', description: 'list', timeout: 5000 } }] });
    expect(mapAgentCall('claude-code', 'Read', { file_path: '/w/a.js', offset: 2, pages: '1' })).toEqual({ kind: 'calls', calls: [{ tool: 'Read', input: { file_path: '/w/a.js', offset: 2 } }] });
    expect(mapAgentCall('claude-code', 'LS', { path: '/w/src' })).toEqual({ kind: 'calls', calls: [{ tool: 'Glob', input: { pattern: '*', path: '/w/src' } }] });
    expect(mapAgentCall('claude-code', 'NotebookEdit', { notebook_path: '/w/n.ipynb', new_source: 'x' })).toEqual({ kind: 'calls', calls: [{ tool: 'Write', input: { file_path: '/w/n.ipynb', content: 'x' } }] });
    // Codex's view_image reads a file from disk: the guard judges where, as for Read.
    expect(mapAgentCall('codex', 'view_image', { path: '/home/u/.ssh/id_rsa' })).toEqual({ kind: 'calls', calls: [{ tool: 'Read', input: { file_path: '/home/u/.ssh/id_rsa' } }] });
    expect(mapAgentCall('claude-code', 'Grep', { pattern: 'a', type: 'js', '-i': true })).toEqual({ kind: 'calls', calls: [{ tool: 'Grep', input: { pattern: 'a', '-i': true } }] });
  });

  it('splits a MultiEdit into one Edit per edit, all of which must be allowed', () => {
    const mapped = mapAgentCall('claude-code', 'MultiEdit', { file_path: '/w/a.js', edits: [{ old_string: 'a', new_string: 'b' }, { old_string: 'c', new_string: 'd', replace_all: true }] });
    expect(mapped).toEqual({
      kind: 'calls',
      calls: [
        { tool: 'Edit', input: { file_path: '/w/a.js', old_string: 'a', new_string: 'b' } },
        { tool: 'Edit', input: { file_path: '/w/a.js', old_string: 'c', new_string: 'd', replace_all: true } },
      ],
    });
  });

  it("maps Codex's shell (an argv or a string, with its workdir) and apply_patch (each file it touches)", () => {
    expect(mapAgentCall('codex', 'shell', { command: ['bash', '-lc', 'npm test'] })).toEqual({ kind: 'calls', calls: [{ tool: 'Bash', input: { command: 'npm test' } }] });
    expect(mapAgentCall('codex', 'shell', { command: ['git', 'log', '--format=%s x'], workdir: '/w/sub dir' })).toEqual({ kind: 'calls', calls: [{ tool: 'Bash', input: { command: "cd '/w/sub dir' && git log '--format=%s x'" } }] });
    const patch = '*** Begin Patch\n*** Update File: src/a.js\n@@\n-a\n+b\n*** Add File: src/b.js\n+x\n*** Delete File: old.js\n*** End Patch\n';
    expect(patchPaths(patch)).toEqual(['src/a.js', 'src/b.js', 'old.js']);
    expect(mapAgentCall('codex', 'apply_patch', { command: patch })).toEqual({ kind: 'calls', calls: ['src/a.js', 'src/b.js', 'old.js'].map((file) => ({ tool: 'Write', input: { file_path: file, content: '' } })) });
  });

  it('leaves what no corral tool describes unknown (web, MCP, a patch naming no file), and lets internal tools through', () => {
    for (const name of ['WebFetch', 'WebSearch', 'mcp__github__create_issue', 'SlashCommand']) expect(mapAgentCall('claude-code', name, {})).toEqual({ kind: 'unknown' });
    expect(mapAgentCall('codex', 'apply_patch', { command: 'no headers' })).toEqual({ kind: 'unknown' });
    expect(mapAgentCall('claude-code', 'TodoWrite', { todos: [] })).toEqual({ kind: 'internal' });
  });
});

describe('judging an agent call', () => {
  const judgeBy = (answers: Record<string, HookAnswer>) => async (call: CorralCall): Promise<HookAnswer> => answers[String(call.input.old_string ?? call.tool)] ?? { effect: 'allow', reason: 'ok' };

  it('the strictest part decides, and a deny stops judging the rest', async () => {
    const seen: string[] = [];
    const answer = await judgeAgentCall('claude-code', { toolName: 'MultiEdit', toolUseId: 't', toolInput: { file_path: '/w/a', edits: [{ old_string: 'a', new_string: '' }, { old_string: 'b', new_string: '' }, { old_string: 'c', new_string: '' }] } }, async (call, index, of) => {
      seen.push(`${index + 1}/${of}`);
      return judgeBy({ b: { effect: 'deny', reason: 'no b' } })(call);
    });
    expect(answer).toEqual({ effect: 'deny', reason: 'no b' });
    expect(seen).toEqual(['1/3', '2/3']);
  });

  it('an unknown tool is judged under its own name (so the guard denies it as unknown)', async () => {
    const judged: string[] = [];
    await judgeAgentCall('claude-code', { toolName: 'WebFetch', toolUseId: 't', toolInput: { url: 'https://x' } }, async (call) => {
      judged.push(call.tool);
      return { effect: 'deny', reason: 'unknown tool' };
    });
    expect(judged).toEqual(['WebFetch']);
  });
});

describe('the hook answer and the socket', () => {
  it('answers with hookSpecificOutput.permissionDecision and the reason', () => {
    const deny = formatHookAnswer({ effect: 'deny', reason: 'Rule: x' });
    expect(JSON.parse(deny.stdout)).toEqual({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'Rule: x' } });
    expect(deny.exitCode).toBe(0);
    expect(JSON.parse(formatHookAnswer({ effect: 'allow', reason: 'ok' }).stdout).hookSpecificOutput.permissionDecision).toBe('allow');
  });

  it('reads the hook input, refusing what is not a PreToolUse call', () => {
    expect(parseHookInput('{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"t1","session_id":"s"}')).toEqual({ ok: true, call: { toolName: 'Bash', toolInput: { command: 'ls' }, toolUseId: 't1', sessionId: 's' } });
    expect(parseHookInput('not json').ok).toBe(false);
    expect(parseHookInput('{"hook_event_name":"PostToolUse","tool_name":"Bash"}').ok).toBe(false);
    expect(parseHookInput('{"tool_input":{}}').ok).toBe(false);
  });

  it('the running corral decides over the socket; a socket that is gone, or bad input, is a deny', async () => {
    const dir = tempDir('corral-hook-');
    const socket = path.join(dir, 'guard.sock');
    const server = await serveGuard(socket, async (request) => ({ effect: request.call.toolName === 'Bash' ? 'allow' : 'deny', reason: `judged ${request.call.toolName}` }));
    const env = { CORRAL_GUARD_SOCKET: socket };
    const input = (tool: string) => JSON.stringify({ hook_event_name: 'PreToolUse', tool_name: tool, tool_input: {}, tool_use_id: 'x' });
    const neverLocal = async (): Promise<HookAnswer> => {
      throw new Error('judged locally inside a run');
    };
    expect(JSON.parse((await runGuardHook('claude-code', input('Bash'), env, neverLocal)).stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'allow', permissionDecisionReason: 'judged Bash' });
    expect(JSON.parse((await runGuardHook('claude-code', input('Write'), env, neverLocal)).stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    expect(JSON.parse((await runGuardHook('claude-code', '{', env, neverLocal)).stdout).hookSpecificOutput.permissionDecision).toBe('deny');
    // A decider that throws is a deny, said.
    const failing = await serveGuard(path.join(dir, 'failing.sock'), async () => {
      throw new Error('boom');
    });
    expect(await askGuard(path.join(dir, 'failing.sock'), { agent: 'codex', call: { toolName: 'Bash', toolInput: {}, toolUseId: 'x' } })).toEqual({ effect: 'deny', reason: 'corral could not judge the call: boom' });
    await failing.close();
    await server.close();
    const gone = await runGuardHook('claude-code', input('Bash'), env, neverLocal);
    expect(JSON.parse(gone.stdout).hookSpecificOutput).toMatchObject({ permissionDecision: 'deny' });
    expect(JSON.parse(gone.stdout).hookSpecificOutput.permissionDecisionReason).toContain('could not be reached');
  });

  it('without the socket, the local judge decides and an ask stays an ask', async () => {
    const out = await runGuardHook('claude-code', JSON.stringify({ tool_name: 'Bash', tool_input: { command: 'npm publish' }, tool_use_id: 'x' }), {}, async () => ({ effect: 'ask', reason: 'publishing needs a person' }));
    expect(JSON.parse(out.stdout).hookSpecificOutput).toEqual({ hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: 'publishing needs a person' });
  });
});

describe('the control folder', () => {
  it("is the run directory's agent/ unless its socket path would be too long for a unix socket", async () => {
    const { agentControlDir } = await import('../../src/agents/drivers.js');
    expect(agentControlDir('/tmp/r/.corral/runs/t-1')).toBe('/tmp/r/.corral/runs/t-1/agent');
    const deep = `/home/someone/${'very-long-folder-name/'.repeat(6)}.corral/runs/ticket-20261205-000000-abcd`;
    const short = agentControlDir(deep);
    expect(Buffer.byteLength(path.join(short, 'guard.sock'))).toBeLessThanOrEqual(100);
    expect(agentControlDir(deep)).toBe(short);
  });
});
