import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../../src/agent/model.js';
import { createReplayModel, loadReplayScript } from '../../src/agent/replay-model.js';
import { parseTrace } from '../../src/trace/read.js';
import { UsageError } from '../../src/errors.js';
import type { Guard } from '../../src/guard/guard.js';
import { replayDecisions } from '../../src/run/replay-decisions.js';
import { describeCall } from '../../src/text/describe-call.js';
import { tempDir } from '../support/repo.js';

const request = (): ModelRequest => ({ system: 's', tools: [], maxTokens: 100, signal: new AbortController().signal, messages: [{ role: 'user', content: 'task' }] });

const usage = (n: number) => ({ inputTokens: n, outputTokens: n + 1, cacheReadTokens: n + 2, cacheWriteTokens: n + 3 });
const line = (seq: number, event: Record<string, unknown>): string => JSON.stringify({ v: 1, seq, time: '2025-01-01T00:00:00.000Z', run: 'r', ticket: 't', step: 0, ...event });

/** A small recorded run: a Write and a Bash call, a paused turn with no content, then the end. */
function traceLines(): string[] {
  return [
    line(0, { type: 'run_start', runId: 'r', ticket: { id: 't', file: '/gone/t.yaml' }, model: 'claude-sonnet-4-6', runDir: '/gone/.corral/runs/r', corral: '0.1.0', configDigest: '0123456789abcdef' }),
    line(1, { type: 'model_request', step: 1, messages: 1, bytes: 10 }),
    line(2, {
      type: 'model_response', step: 1, stopReason: 'tool_use', usage: usage(100), durationMs: 5,
      content: [{ type: 'text', text: 'Writing.' }, { type: 'tool_use', id: 'toolu_01', name: 'Write', input: { file_path: 'src/a.txt', content: 'x\n' } }, { type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'git   push\n  origin main' } }],
    }),
    line(3, { type: 'tool_call', step: 1, id: 'toolu_01', tool: 'Write', input: { file_path: 'src/a.txt', content: 'x\n' } }),
    line(4, { type: 'decision', step: 1, id: 'toolu_01', tool: 'Write', effect: 'allow', rule: 'fence.allow', scope: 'ticket', reason: 'r', commands: [], paths: [] }),
    line(5, { type: 'tool_call', step: 1, id: 'toolu_02', tool: 'Bash', input: { command: 'git   push\n  origin main' } }),
    line(6, { type: 'decision', step: 1, id: 'toolu_02', tool: 'Bash', effect: 'ask', rule: 'baseline.unknown-command', scope: 'baseline', reason: 'r', commands: [], paths: [] }),
    line(7, { type: 'model_response', step: 2, stopReason: 'pause_turn', usage: usage(200), durationMs: 5, content: [] }),
    line(8, { type: 'model_response', step: 3, stopReason: 'end_turn', usage: usage(300), durationMs: 5, content: [{ type: 'text', text: 'Done.' }] }),
    line(9, { type: 'end', step: 3, status: 'passed', exitCode: 0, reason: '' }),
  ];
}

function writeTrace(name: string, text: string): string {
  const file = path.join(tempDir(), name);
  writeFileSync(file, text);
  return file;
}

describe('replaying a recorded trace as a model', () => {
  it('plays the recorded responses in call order, with their ids, stop reasons and usage', async () => {
    const file = writeTrace('trace.jsonl', `${traceLines().join('\n')}\n`);
    const script = await loadReplayScript(file);
    expect(script.source).toBe('trace');
    const model = createReplayModel(`replay:${file}`, script);
    const first = await model.complete(request());
    expect(first).toMatchObject({ stopReason: 'tool_use', usage: usage(100) });
    expect(first.content).toEqual([
      { type: 'text', text: 'Writing.' },
      { type: 'tool_use', id: 'toolu_01', name: 'Write', input: { file_path: 'src/a.txt', content: 'x\n' } },
      { type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'git   push\n  origin main' } },
    ]);
    // The same request again still moves on: a trace is played call by call, so an empty paused turn comes back too.
    expect(await model.complete(request())).toMatchObject({ stopReason: 'pause_turn', content: [], usage: usage(200) });
    expect(await model.complete(request())).toMatchObject({ stopReason: 'end_turn', content: [{ type: 'text', text: 'Done.' }], usage: usage(300) });
    expect((await model.complete(request())).stopReason).toBe('end_turn');
  });

  it('recognises a trace by its first line whatever its name', async () => {
    const file = writeTrace('recorded.txt', `${traceLines().join('\n')}\n`);
    expect((await loadReplayScript(file)).turns).toHaveLength(3);
  });

  it('replays a truncated trace up to its last complete response', async () => {
    const lines = traceLines();
    const cut = lines[8]!.slice(0, 40);
    const file = writeTrace('trace.jsonl', `${lines.slice(0, 8).join('\n')}\n${cut}`);
    const script = await loadReplayScript(file);
    expect(script.turns.map((t) => t.stopReason)).toEqual(['tool_use', 'pause_turn']);
    expect(parseTrace(`${lines.slice(0, 8).join('\n')}\n${cut}`, 't', { mode: 'strict' }).cut).toBe(true);
  });

  it('names the file and line of a broken trace', async () => {
    const lines = traceLines();
    lines[3] = '{not json';
    const error = await loadReplayScript(writeTrace('trace.jsonl', `${lines.join('\n')}\n`), 'runs/trace.jsonl').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain('runs/trace.jsonl');
    expect((error as UsageError).problems).toMatchObject([{ file: 'runs/trace.jsonl', line: 4, message: 'not a JSON line' }]);

    const bad = traceLines();
    bad[7] = line(7, { type: 'model_response', step: 2, stopReason: 'end_turn', usage: usage(1), durationMs: 1, content: [{ type: 'tool_use', name: 'Bash', input: {} }] });
    const invalid = await loadReplayScript(writeTrace('trace.jsonl', `${bad.join('\n')}\n`), 'x.jsonl').catch((e: unknown) => e);
    expect((invalid as UsageError).problems).toMatchObject([{ file: 'x.jsonl', line: 8, field: 'content.0.id' }]);
    expect((invalid as UsageError).message).toContain('x.jsonl:8: invalid trace line: content.0.id:');

    const empty = await loadReplayScript(writeTrace('trace.jsonl', `${lines[0]}\n`), 'e.jsonl').catch((e: unknown) => e);
    expect((empty as UsageError).message).toContain('no model responses');
  });
});

describe('recorded decisions judged again', () => {
  it('separates a changed effect from the same effect by another rule, pairing calls and decisions by id', async () => {
    const guard: Guard = {
      policy: { rules: [], defaultEffect: 'ask' } as unknown as Guard['policy'],
      sandbox: { kind: 'none', network: true },
      worktree: '/w',
      async decide({ tool }) {
        const decision = tool === 'Bash' ? { effect: 'deny' as const, rule: 'Bash(git push:*)', scope: 'project' as const, reason: 'no pushes' } : { effect: 'allow' as const, rule: 'Write(src/**)', scope: 'project' as const, reason: 'ok' };
        return { decision, facts: { tool, input: {}, commands: [], paths: [], problems: [] } };
      },
    };
    const { events } = parseTrace(`${traceLines().join('\n')}\n`, 't', { mode: 'strict' });
    const replay = await replayDecisions(events, guard);
    expect(replay.calls).toBe(2);
    expect(replay.changed).toMatchObject([{ step: 1, id: 'toolu_02', call: 'Bash(git push origin main)', then: { effect: 'ask', rule: 'baseline.unknown-command' }, now: { effect: 'deny', rule: 'Bash(git push:*)' } }]);
    expect(replay.otherRule).toMatchObject([{ id: 'toolu_01', call: 'Write(src/a.txt)', then: { rule: 'fence.allow' }, now: { rule: 'Write(src/**)' } }]);
  });

  it('renders a call short', () => {
    expect(describeCall('Bash', { command: 'x'.repeat(100) }, 60)).toMatch(/^Bash\(x{59}…\)$/);
    expect(describeCall('Glob', { pattern: '**/*.ts' })).toBe('Glob(**/*.ts)');
    expect(describeCall('Mystery', { a: 1 })).toBe('Mystery({"a":1})');
  });
});
