import { describe, expect, it } from 'vitest';
import { claudeCodeStream } from '../../src/agents/claude-code.js';
import { codexStream } from '../../src/agents/codex.js';
import type { AgentStreamEvent } from '../../src/agents/stream.js';

const lines = (reader: { push(line: string): AgentStreamEvent[]; end(): AgentStreamEvent[] }, events: unknown[]): AgentStreamEvent[] => [...events.flatMap((e) => reader.push(JSON.stringify(e))), ...reader.end()];

describe("Claude Code's stream-json", () => {
  it('joins the blocks of one message into one turn, with its usage once, and reads results and the end', () => {
    const usage = { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 2, cache_creation_input_tokens: 1 };
    const message = { id: 'msg_1', model: 'claude-x', stop_reason: null, usage };
    const events = lines(claudeCodeStream(), [
      { type: 'system', subtype: 'init', session_id: 's1' },
      { type: 'assistant', message: { ...message, content: [{ type: 'thinking', thinking: 'hmm' }] } },
      { type: 'assistant', message: { ...message, content: [{ type: 'text', text: 'Looking.' }] } },
      { type: 'assistant', message: { ...message, content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }] } },
      { type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'a.js' }], is_error: false }] } },
      'not json',
      { type: 'assistant', message: { id: 'msg_2', model: 'claude-x', content: [{ type: 'text', text: 'Done.' }], usage } },
      { type: 'result', subtype: 'success', is_error: false, result: 'Done.', total_cost_usd: 0.01, session_id: 's1' },
    ]);
    expect(events).toEqual([
      { kind: 'session', sessionId: 's1' },
      { kind: 'turn', model: 'claude-x', content: [{ type: 'text', text: 'Looking.' }, { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'ls' } }], stopReason: 'tool_use', usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1 } },
      { kind: 'tool_result', id: 't1', content: 'a.js', isError: false },
      { kind: 'turn', model: 'claude-x', content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn', usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, cacheWriteTokens: 1 } },
      { kind: 'result', ok: true, text: 'Done.', costUsd: 0.01 },
    ]);
  });

  it('an API error and a refusal are results that are not ok', () => {
    const [error] = lines(claudeCodeStream(), [{ type: 'result', subtype: 'success', is_error: true, result: 'API Error: 500' }]);
    expect(error).toEqual({ kind: 'result', ok: false, text: 'API Error: 500', error: 'API Error: 500' });
    const refused = lines(claudeCodeStream(), [{ type: 'assistant', message: { id: 'm', content: [{ type: 'text', text: 'No.' }], stop_reason: 'refusal' } }, { type: 'result', subtype: 'success', is_error: false, result: 'No.' }]);
    expect(refused.at(-1)).toMatchObject({ kind: 'result', ok: false, refused: true });
  });
});

describe("Codex's exec --json", () => {
  it('one turn per Codex turn: its messages and commands, with the usage of turn.completed', () => {
    const events = lines(codexStream(), [
      { type: 'thread.started', thread_id: 'th1' },
      { type: 'turn.started' },
      { type: 'item.completed', item: { id: 'item_0', type: 'reasoning', text: 'hmm' } },
      { type: 'item.completed', item: { id: 'item_1', type: 'command_execution', command: 'bash -lc ls', aggregated_output: 'a.js\n', exit_code: 0, status: 'completed' } },
      { type: 'item.completed', item: { id: 'item_2', type: 'agent_message', text: 'Done.' } },
      { type: 'turn.completed', usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 7 } },
    ]);
    expect(events).toEqual([
      { kind: 'session', sessionId: 'th1' },
      { kind: 'tool_result', id: 'item_1', content: 'a.js\n', isError: false },
      { kind: 'turn', model: 'codex', content: [{ type: 'tool_use', id: 'item_1', name: 'shell', input: { command: 'bash -lc ls' } }, { type: 'text', text: 'Done.' }], stopReason: 'end_turn', usage: { inputTokens: 100, outputTokens: 7, cacheReadTokens: 40, cacheWriteTokens: 0 } },
      { kind: 'result', ok: true, text: 'Done.' },
    ]);
  });

  it('a failed turn is a result that is not ok, saying why', () => {
    const events = lines(codexStream(), [{ type: 'thread.started', thread_id: 'th1' }, { type: 'turn.failed', error: { message: 'stream disconnected: 500' } }]);
    expect(events.at(-1)).toEqual({ kind: 'result', ok: false, text: '', error: 'stream disconnected: 500' });
  });
});
