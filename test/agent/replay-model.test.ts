import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createReplayModel, loadReplayScript } from '../../src/agent/replay-model.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../support/repo.js';

const request = (assistantTurns: number) => ({
  system: 's',
  tools: [],
  maxTokens: 100,
  signal: new AbortController().signal,
  messages: [
    { role: 'user' as const, content: 'task' },
    ...Array.from({ length: assistantTurns }, () => [
      { role: 'assistant' as const, content: 'x' },
      { role: 'user' as const, content: 'y' },
    ]).flat(),
  ],
});

/** A replay model playing `script`, written to a file as a ticket's would be. */
async function replayOf(script: string) {
  const file = path.join(tempDir(), 's.yaml');
  writeFileSync(file, script);
  return createReplayModel(`replay:${file}`, await loadReplayScript(file));
}

describe('the replay model', () => {
  it('plays the turn after the assistant turns so far, with stable tool ids', async () => {
    const model = await replayOf('turns:\n  - text: hi\n    tools:\n      - Read: {file_path: a}\n      - Bash: {command: ls}\n  - text: bye\n');
    const first = await model.complete(request(0));
    expect(first.stopReason).toBe('tool_use');
    expect(first.content).toEqual([
      { type: 'text', text: 'hi' },
      { type: 'tool_use', id: 'toolu_replay_0_0', name: 'Read', input: { file_path: 'a' } },
      { type: 'tool_use', id: 'toolu_replay_0_1', name: 'Bash', input: { command: 'ls' } },
    ]);
    expect(first.usage.inputTokens).toBeGreaterThan(0);
    expect((await model.complete(request(1))).content).toEqual([{ type: 'text', text: 'bye' }]);
    const past = await model.complete(request(5));
    expect(past.stopReason).toBe('end_turn');
  });

  it('counts the turns a compaction dropped as played: the script goes on from the turn after them', async () => {
    const model = await replayOf('turns:\n  - text: one\n  - text: two\n  - text: three\n  - text: four\n');
    // A summary, then one kept turn, standing for three turns of which two were dropped.
    const compacted = { ...request(1), compactedTurns: 2 };
    compacted.messages[0] = { role: 'user', content: '[corral compacted this conversation ...]' };
    expect((await model.complete(compacted)).content).toEqual([{ type: 'text', text: 'four' }]);
    expect((await model.complete(request(1))).content).toEqual([{ type: 'text', text: 'two' }]);
  });

  it('counts the assistant turns of one conversation as it grows, and of a new one afresh', async () => {
    const model = await replayOf('turns:\n  - text: one\n  - text: two\n  - text: three\n');
    const growing = request(0);
    const text = async (r: ReturnType<typeof request>) => (await model.complete(r)).content;
    expect(await text(growing)).toEqual([{ type: 'text', text: 'one' }]);
    growing.messages.push({ role: 'assistant', content: 'x' }, { role: 'user', content: 'y' });
    expect(await text(growing)).toEqual([{ type: 'text', text: 'two' }]);
    growing.messages.push({ role: 'assistant', content: 'x' }, { role: 'user', content: 'y' });
    expect(await text(growing)).toEqual([{ type: 'text', text: 'three' }]);
    // The same list cut back (a rewind) is counted afresh too.
    growing.messages.splice(1);
    expect(await text(growing)).toEqual([{ type: 'text', text: 'one' }]);
    // Another conversation (a shorter one, then one as long whose messages differ) is counted from its start.
    expect(await text(request(1))).toEqual([{ type: 'text', text: 'two' }]);
    const replaced = request(2);
    replaced.messages.splice(1, 2, { role: 'user', content: 'y' }, { role: 'user', content: 'z' });
    expect(await text(replaced)).toEqual([{ type: 'text', text: 'two' }]);
  });

  it('hands out a fresh copy of a turn every time, and estimates its output from its size', async () => {
    const model = await replayOf('turns:\n  - text: hi\n    tools:\n      - Write: {file_path: a, content: "1"}\n');
    const first = await model.complete(request(0));
    const expected = [
      { type: 'text', text: 'hi' },
      { type: 'tool_use', id: 'toolu_replay_0_0', name: 'Write', input: { file_path: 'a', content: '1' } },
    ];
    expect(first.usage.outputTokens).toBe(Math.ceil(JSON.stringify(expected).length / 4));
    (first.content[1] as { input: Record<string, unknown> }).input.file_path = 'changed by the caller';
    expect((await model.complete(request(0))).content).toEqual(expected);
  });

  it('reports script problems with line and column', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'bad.yaml');
    writeFileSync(file, 'turns:\n  - text: ok\n  - txt: typo\n  - tools:\n      - {Read: {}, Bash: {}}\n');
    const error = await loadReplayScript(file, 'bad.yaml').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    const problems = (error as UsageError).problems.map((p) => `${p.line}:${p.column} ${p.field}`);
    expect(problems).toEqual(['3:5 turns.1', '5:9 turns.2.tools.0']);
  });
});
