// The SDK-path bench is only as good as its stand-in: the real SDK must read its streams
// as it reads the API's (tool input from input_json_delta pieces, stop reasons, usage).
import { spawn, type ChildProcess } from 'node:child_process';
import { get } from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// The stand-in stamps its times on this clock, in its own process.
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { sharedClockMs } from '../../bench/lib.mjs';

const STANDIN = path.resolve(import.meta.dirname, '../../bench/messages-standin.mjs');

let child: ChildProcess;
let url: string;

beforeAll(async () => {
  child = spawn(process.execPath, [STANDIN], { stdio: ['pipe', 'pipe', 'inherit'] });
  const first = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
  url = `http://127.0.0.1:${(JSON.parse(first.value as string) as { port: number }).port}`;
});

afterAll(() => {
  child.stdin!.end();
  child.kill();
});

function stats(id: string): Promise<{ requests: number; bodyBytes: number[]; gapsMs: number[]; serveMs: number[]; firstRequestAt: number; lastReplyAt: number }> {
  return new Promise((resolve, reject) => {
    get(`${url}/stats/${id}`, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (part: string) => (body += part));
      res.on('end', () => resolve(JSON.parse(body)));
    }).on('error', reject);
  });
}

describe('the bench stand-in for the Messages API', () => {
  it('streams N Bash calls and then a closing turn, which the real SDK assembles', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test-not-a-key', baseURL: `${url}/run/t1/2/megabyte`, maxRetries: 0 });
    const ask = () =>
      client.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 100, messages: [{ role: 'user', content: 'go' }] }).finalMessage();
    const startedAt = sharedClockMs();
    const askedMs: number[] = [];
    for (let step = 0; step < 2; step++) {
      const askedAt = sharedClockMs();
      const message = await ask();
      askedMs.push(sharedClockMs() - askedAt);
      expect(message.stop_reason).toBe('tool_use');
      expect(message.content).toEqual([
        expect.objectContaining({ type: 'tool_use', name: 'Bash', input: { command: expect.stringContaining('head -c 1048576'), description: 'bench step' } }),
      ]);
      expect(message.usage.output_tokens).toBe(40);
    }
    const last = await ask();
    const answeredAt = sharedClockMs();
    expect(last.stop_reason).toBe('end_turn');
    expect(last.content).toEqual([expect.objectContaining({ type: 'text', text: 'Done.' })]);

    const seen = await stats('t1');
    expect(seen.requests).toBe(3);
    expect(seen.gapsMs).toHaveLength(2);
    expect(seen.bodyBytes.every((bytes) => bytes > 0)).toBe(true);
    expect(seen.firstRequestAt).toBeGreaterThanOrEqual(startedAt);
    // The last reply ended after the first request came and before the client had it all.
    expect(seen.lastReplyAt).toBeGreaterThan(seen.firstRequestAt);
    expect(seen.lastReplyAt).toBeLessThanOrEqual(answeredAt);
    // Its own time on each request lies within the client's wait for it: the bench takes it
    // out of a step as the part that is not corral's.
    expect(seen.serveMs).toHaveLength(3);
    seen.serveMs.slice(0, 2).forEach((ms, step) => {
      expect(ms).toBeGreaterThan(0);
      expect(ms).toBeLessThanOrEqual(askedMs[step]!);
    });
  });

  it('answers an unknown route with the API error shape, which the SDK reports', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test-not-a-key', baseURL: `${url}/nowhere`, maxRetries: 0 });
    await expect(client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 10, messages: [{ role: 'user', content: 'go' }] })).rejects.toThrow(/404/);
  });
});
