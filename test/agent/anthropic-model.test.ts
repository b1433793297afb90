// The real SDK path against a local Messages API: what corral sends (streaming, caching
// breakpoints, credentials the SDK read itself), what it makes of the reply, and how the
// SDK's retries and failures come out. Nothing here reaches the internet.
import Anthropic, { APIUserAbortError } from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { createAnthropicModel } from '../../src/agent/anthropic-model.js';
import { hasApiKey } from '../../src/agent/api-key.js';
import { ModelApiError, type MessageParam, type ModelRequest, type ToolSpec } from '../../src/agent/model.js';
import { costUsd } from '../../src/config/prices.js';
import { startMessagesServer, type MessagesServer, type RecordedRequest, type ScriptStep } from '../support/messages-server.js';

const FAKE_KEY = 'sk-ant-test-not-a-real-key';
// Not a model the SDK flags as deprecated, which it would warn about on every request.
const MODEL = 'claude-sonnet-4-6';
const EPHEMERAL = { type: 'ephemeral' };

const TOOLS: ToolSpec[] = [
  {
    name: 'Read',
    description: 'Read a file.',
    input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
  },
  {
    name: 'Bash',
    description: 'Run a command.',
    input_schema: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
  },
];

/** A server for this test only, with the SDK's environment pointed at it (undone after the test). */
async function serve(script: ScriptStep[]): Promise<MessagesServer> {
  const server = await startMessagesServer(script);
  onTestFinished(() => server.close());
  vi.stubEnv('ANTHROPIC_BASE_URL', server.url);
  vi.stubEnv('ANTHROPIC_API_KEY', FAKE_KEY);
  vi.stubEnv('ANTHROPIC_AUTH_TOKEN', undefined);
  return server;
}

afterEach(() => {
  vi.unstubAllEnvs();
});

function request(messages: MessageParam[], signal = new AbortController().signal): ModelRequest {
  return { system: 'You are corral, a careful coding agent.', tools: TOOLS, messages, maxTokens: 4096, signal };
}

/** The key as the SDK sent it: this SDK version sends an API key as a Bearer token, older ones as x-api-key. */
function sentKey(recorded: RecordedRequest): string | undefined {
  const header = recorded.headers['x-api-key'] ?? recorded.headers['authorization'];
  return typeof header === 'string' ? header.replace(/^Bearer /, '') : undefined;
}

/** Every cache_control marker anywhere in a request body. */
function breakpoints(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + breakpoints(item), 0);
  if (typeof value !== 'object' || value === null) return 0;
  return Object.entries(value).reduce(
    (sum, [key, item]) => sum + (key === 'cache_control' ? 1 : breakpoints(item)),
    0,
  );
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error,
  );
}

describe('createAnthropicModel against a local Messages API', () => {
  it('streams a tool-use conversation with caching breakpoints and maps each turn', async () => {
    const bashInput = { command: 'npm test -- --grep "late fee"', env: { CI: '1' }, timeout_ms: 120000 };
    const server = await serve([
      {
        content: [
          { type: 'text', text: 'Let me read the fees module and run its tests.' },
          { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'src/fees.js' } },
          { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: bashInput },
        ],
        stop_reason: 'tool_use',
        usage: { input_tokens: 1200, output_tokens: 85, cache_creation_input_tokens: 900, cache_read_input_tokens: 0 },
        model: 'claude-sonnet-4-5-20250929',
      },
      {
        content: [{ type: 'text', text: 'Done: daysOverdue now counts days past the due date.' }],
        stop_reason: 'end_turn',
        usage: { input_tokens: 300, output_tokens: 12, cache_creation_input_tokens: 40, cache_read_input_tokens: 2100 },
        model: 'claude-sonnet-4-5-20250929',
      },
    ]);
    const model = createAnthropicModel({ model: MODEL, maxRetries: 0 });
    expect(model.id).toBe(MODEL);

    const first: MessageParam[] = [{ role: 'user', content: 'Fix the late fee bug in src/fees.js.' }];
    const firstBefore = structuredClone(first);
    const turn1 = await model.complete(request(first));

    expect(turn1).toEqual({
      content: [
        { type: 'text', text: 'Let me read the fees module and run its tests.' },
        { type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'src/fees.js' } },
        { type: 'tool_use', id: 'toolu_bash', name: 'Bash', input: bashInput },
      ],
      stopReason: 'tool_use',
      usage: { inputTokens: 1200, outputTokens: 85, cacheReadTokens: 0, cacheWriteTokens: 900 },
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(first).toEqual(firstBefore); // the caller's messages were copied, not marked

    const sent1 = server.requests[0]!;
    expect(sent1.path).toBe('/v1/messages');
    expect(sentKey(sent1)).toBe(FAKE_KEY);
    expect(sent1.headers['anthropic-version']).toBeTruthy();
    expect(sent1.body).toMatchObject({ model: MODEL, max_tokens: 4096, stream: true });
    expect(sent1.body.system).toEqual([
      { type: 'text', text: 'You are corral, a careful coding agent.', cache_control: EPHEMERAL },
    ]);
    expect(sent1.body.tools).toEqual([
      { name: 'Read', description: 'Read a file.', input_schema: TOOLS[0]!.input_schema },
      { name: 'Bash', description: 'Run a command.', input_schema: TOOLS[1]!.input_schema, cache_control: EPHEMERAL },
    ]);
    expect(sent1.body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Fix the late fee bug in src/fees.js.', cache_control: EPHEMERAL }] },
    ]);
    expect(breakpoints(sent1.body)).toBe(3);

    const second: MessageParam[] = [
      ...first,
      { role: 'assistant', content: turn1.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_read', content: 'export function daysOverdue() { return 0; }' },
          { type: 'tool_result', tool_use_id: 'toolu_bash', content: '1 failing', is_error: true },
        ],
      },
    ];
    const secondBefore = structuredClone(second);
    const turn2 = await model.complete(request(second));

    expect(turn2).toEqual({
      content: [{ type: 'text', text: 'Done: daysOverdue now counts days past the due date.' }],
      stopReason: 'end_turn',
      usage: { inputTokens: 300, outputTokens: 12, cacheReadTokens: 2100, cacheWriteTokens: 40 },
      model: 'claude-sonnet-4-5-20250929',
    });
    expect(second).toEqual(secondBefore);

    const sent2 = server.requests[1]!;
    expect(sent2.body.stream).toBe(true);
    expect(sent2.body.messages).toEqual([
      // The breakpoint moved on: the first user message is sent as it was given.
      { role: 'user', content: 'Fix the late fee bug in src/fees.js.' },
      { role: 'assistant', content: turn1.content },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_read', content: 'export function daysOverdue() { return 0; }' },
          { type: 'tool_result', tool_use_id: 'toolu_bash', content: '1 failing', is_error: true, cache_control: EPHEMERAL },
        ],
      },
    ]);
    expect(breakpoints(sent2.body)).toBe(3);
    expect(server.requests).toHaveLength(2);

    // The reported (dated) model id prices the turn, cache reads and writes included.
    expect(costUsd(turn2.model, turn2.usage)).toBeCloseTo((300 * 3 + 12 * 15 + 40 * 3.75 + 2100 * 0.3) / 1e6, 12);
  });

  it('keeps at most its own breakpoints when the caller left markers in', async () => {
    const server = await serve([{ content: [{ type: 'text', text: 'ok' }] }]);
    const model = createAnthropicModel({ model: MODEL, maxRetries: 0 });
    const messages: MessageParam[] = [
      { role: 'user', content: [{ type: 'text', text: 'one', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: [{ type: 'text', text: 'two', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_x',
            content: [{ type: 'text', text: 'three', cache_control: { type: 'ephemeral' } }],
          },
          { type: 'text', text: 'four', cache_control: { type: 'ephemeral' } },
        ],
      },
    ];
    const before = structuredClone(messages);
    await model.complete(request(messages));

    expect(messages).toEqual(before);
    const sent = server.requests[0]!.body;
    expect(breakpoints(sent)).toBe(3);
    expect(sent.messages.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_x', content: [{ type: 'text', text: 'three' }] },
        { type: 'text', text: 'four', cache_control: EPHEMERAL },
      ],
    });
  });

  it('over many turns, sends one breakpoint, on the newest user block, and re-reads a message whose content was swapped', async () => {
    const server = await serve([1, 2, 3].map((n) => ({ content: [{ type: 'text' as const, text: `reply ${n}` }] })));
    const model = createAnthropicModel({ model: MODEL, maxRetries: 0 });
    const first: MessageParam = { role: 'user', content: [{ type: 'text', text: 'one' }] };
    const messages: MessageParam[] = [first];
    await model.complete(request(messages));
    messages.push({ role: 'assistant', content: [{ type: 'text', text: 'reply 1' }] }, { role: 'user', content: [{ type: 'text', text: 'two' }] });
    await model.complete(request(messages));
    // A message whose content was replaced (as a compaction may do) is sent as it is now, markers left in taken out.
    first.content = [{ type: 'text', text: 'one, shortened', cache_control: { type: 'ephemeral' } }];
    await model.complete(request(messages));

    const bodies = server.requests.map((r) => r.body);
    expect(bodies.map((body) => breakpoints(body.messages))).toEqual([1, 1, 1]);
    expect(bodies[1]!.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'one' }] });
    expect(bodies[1]!.messages[2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'two', cache_control: EPHEMERAL }] });
    expect(bodies[2]!.messages[0]).toEqual({ role: 'user', content: [{ type: 'text', text: 'one, shortened' }] });
    expect(messages[2]).toEqual({ role: 'user', content: [{ type: 'text', text: 'two' }] });
  });

  it('maps null cache counts to 0', async () => {
    await serve([
      {
        content: [{ type: 'text', text: 'hi' }],
        usage: { input_tokens: 7, output_tokens: 3, cache_read_input_tokens: null, cache_creation_input_tokens: null },
      },
    ]);
    const turn = await createAnthropicModel({ model: MODEL, maxRetries: 0 }).complete(request([{ role: 'user', content: 'hi' }]));
    expect(turn.usage).toEqual({ inputTokens: 7, outputTokens: 3, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(turn.model).toBe(MODEL); // the server echoes the requested model when the script names none
    expect(turn.stopReason).toBe('end_turn');
  });

  it('says when the request is on its way, before the reply comes', async () => {
    const server = await serve([{ content: [{ type: 'text', text: 'late' }], delayMs: 300 }]);
    const seen: string[] = [];
    const pending = createAnthropicModel({ model: MODEL }).complete({ ...request([{ role: 'user', content: 'go' }]), onSent: () => seen.push(`sent, ${server.requests.length} received`) });
    const turn = await pending;
    seen.push('answered');
    expect(turn.content).toEqual([{ type: 'text', text: 'late' }]);
    // The server held its reply 300 ms: the run could make its worktree meanwhile.
    expect(seen).toEqual([expect.stringMatching(/^sent, [01] received$/), 'answered']);
  });

  it('lets the SDK retry a 500 and succeeds', async () => {
    const server = await serve([{ status: 500 }, { content: [{ type: 'text', text: 'recovered' }] }]);
    const turn = await createAnthropicModel({ model: MODEL, maxRetries: 2 }).complete(request([{ role: 'user', content: 'go' }]));

    expect(turn.content).toEqual([{ type: 'text', text: 'recovered' }]);
    expect(server.requests).toHaveLength(2);
    expect(server.requests[1]!.headers['x-stainless-retry-count']).toBe('1');
    expect(server.requests[1]!.body).toEqual(server.requests[0]!.body);
  });

  it('ends a persistent 529 in ModelApiError once the SDK gives up', async () => {
    const server = await serve([{ status: 529 }, { status: 529 }]);
    const error = await failure(
      createAnthropicModel({ model: MODEL, maxRetries: 1 }).complete(request([{ role: 'user', content: 'go' }])),
    );

    expect(error).toBeInstanceOf(ModelApiError);
    const message = (error as Error).message;
    expect(message).toContain('529');
    expect(message).toContain('overloaded_error');
    expect(message).toContain('req_test_2');
    expect(message).toContain('after 1 retry');
    expect(server.requests).toHaveLength(2);
  });

  it('says to check ANTHROPIC_API_KEY on a 401, without retrying or showing the key', async () => {
    const server = await serve([
      { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } } },
    ]);
    const error = await failure(
      createAnthropicModel({ model: MODEL, maxRetries: 2 }).complete(request([{ role: 'user', content: 'go' }])),
    );

    expect(error).toBeInstanceOf(ModelApiError);
    const message = (error as Error).message;
    expect(message).toContain('ANTHROPIC_API_KEY');
    expect(message).toContain('401');
    expect(message).toContain('invalid x-api-key');
    expect(message).not.toContain(FAKE_KEY);
    expect(server.requests).toHaveLength(1);
  });

  it('rethrows an abort through the signal as is, not as ModelApiError', async () => {
    const server = await serve([{ content: [{ type: 'text', text: 'too late' }], delayMs: 30_000 }]);
    const controller = new AbortController();
    const pending = createAnthropicModel({ model: MODEL, maxRetries: 2 }).complete(
      request([{ role: 'user', content: 'go' }], controller.signal),
    );
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    controller.abort();

    const error = await failure(pending);
    expect(error).not.toBeInstanceOf(ModelApiError);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(1); // an abort is not retried
  });

  it('does not send a request when the signal is already aborted', async () => {
    const server = await serve([{ content: [{ type: 'text', text: 'unused' }] }]);
    const controller = new AbortController();
    controller.abort();
    const error = await failure(
      createAnthropicModel({ model: MODEL }).complete(request([{ role: 'user', content: 'go' }], controller.signal)),
    );
    expect(error).not.toBeInstanceOf(ModelApiError);
    expect(server.requests).toHaveLength(0);
  });

  it('reports a timeout as ModelApiError', async () => {
    await serve([{ content: [{ type: 'text', text: 'slow' }], delayMs: 30_000 }]);
    const error = await failure(
      createAnthropicModel({ model: MODEL, maxRetries: 0, timeoutMs: 100 }).complete(request([{ role: 'user', content: 'go' }])),
    );
    expect(error).toBeInstanceOf(ModelApiError);
    expect((error as Error).message).toMatch(/timed out/);
  });

  it('ends a stream that goes quiet after its headers with the same timeout, not retried', async () => {
    const reply = { content: [{ type: 'text' as const, text: 'partial' }] };
    const server = await serve([{ wire: 'stream', reply, afterEvents: 2, then: 'stall' }]);
    const started = Date.now();
    const error = await failure(
      createAnthropicModel({ model: MODEL, maxRetries: 2, timeoutMs: 300 }).complete(request([{ role: 'user', content: 'go' }])),
    );
    expect(error).toBeInstanceOf(ModelApiError);
    expect((error as Error).message).toMatch(/^Anthropic API response timed out: its stream sent nothing for 0.3 s/);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(server.requests).toHaveLength(1);
  });

  it('says how a started stream broke: reset, malformed, or ended early', async () => {
    const reply = { content: [{ type: 'text' as const, text: 'hello there' }] };
    // The SDK logs the chunk it could not parse; expected here, so kept out of the test output.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    onTestFinished(() => logged.mockRestore());
    const cases = [
      ['reset', /^the Anthropic API response stream broke off \(\w+\)/],
      ['garbage', /^the Anthropic API sent a malformed response stream/],
      ['end', /^the Anthropic API response stream ended early/],
    ] as const;
    for (const [then, message] of cases) {
      const server = await serve([{ wire: 'stream', reply, then }]);
      // Made after serve(): the SDK reads ANTHROPIC_BASE_URL when the client is made.
      const model = createAnthropicModel({ model: MODEL, maxRetries: 2 });
      const error = await failure(model.complete(request([{ role: 'user', content: 'go' }])));
      expect(error).toBeInstanceOf(ModelApiError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toContain('the SDK retries only until a response starts');
      expect(server.requests).toHaveLength(1);
    }
  });

  it('reports an unreachable API as ModelApiError without naming the URL', async () => {
    const server = await serve([]);
    await server.close(); // nothing listens on the port any more
    const error = await failure(
      createAnthropicModel({ model: MODEL, maxRetries: 0 }).complete(request([{ role: 'user', content: 'go' }])),
    );
    expect(error).toBeInstanceOf(ModelApiError);
    expect((error as Error).message).toMatch(/could not reach the Anthropic API/);
    expect((error as Error).message).not.toContain(server.url);
  });
});

describe('startMessagesServer', () => {
  it('answers a non-streaming request with JSON', async () => {
    const server = await serve([
      {
        content: [
          { type: 'text', text: 'Reading.' },
          { type: 'tool_use', name: 'Read', input: { file_path: 'a.js' } },
        ],
        usage: { input_tokens: 20, output_tokens: 9, cache_read_input_tokens: 4 },
      },
    ]);
    const client = new Anthropic({ maxRetries: 0 });
    const message = await client.messages.create({ model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });

    expect(message.content).toMatchObject([
      { type: 'text', text: 'Reading.' },
      { type: 'tool_use', id: 'toolu_test_1_1', name: 'Read', input: { file_path: 'a.js' } },
    ]);
    expect(message.stop_reason).toBe('tool_use');
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 9, cache_read_input_tokens: 4, cache_creation_input_tokens: 0 });
    expect(server.requests[0]!.body.stream).toBeUndefined();
  });

  it('answers 500, not retried, once the script runs out', async () => {
    const server = await serve([]);
    const error = await failure(
      createAnthropicModel({ model: MODEL, maxRetries: 2 }).complete(request([{ role: 'user', content: 'go' }])),
    );
    expect(error).toBeInstanceOf(ModelApiError);
    expect((error as Error).message).toContain('the script has no response for request #1');
    expect(server.requests).toHaveLength(1);
  });
});

describe('hasApiKey', () => {
  it('is true when either credential the SDK reads is set', () => {
    expect(hasApiKey({ ANTHROPIC_API_KEY: 'sk-ant-x' })).toBe(true);
    expect(hasApiKey({ ANTHROPIC_AUTH_TOKEN: 'token' })).toBe(true);
  });

  it('is false when they are unset or blank', () => {
    expect(hasApiKey({})).toBe(false);
    expect(hasApiKey({ ANTHROPIC_API_KEY: '', ANTHROPIC_AUTH_TOKEN: '  ' })).toBe(false);
  });
});

describe('costUsd', () => {
  const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheWriteTokens: 1_000_000, cacheReadTokens: 1_000_000 };

  it('prices known models by alias and by dated id', () => {
    expect(costUsd('claude-sonnet-4-5', usage)).toBeCloseTo(3 + 15 + 3.75 + 0.3, 10);
    expect(costUsd('claude-sonnet-4-5-20250929', usage)).toBeCloseTo(3 + 15 + 3.75 + 0.3, 10);
    expect(costUsd('claude-opus-4-7', usage)).toBeCloseTo(5 + 25 + 6.25 + 0.5, 10);
    expect(costUsd('claude-haiku-4-5-20251001', usage)).toBeCloseTo(1 + 5 + 1.25 + 0.1, 10);
  });

  it('is null for a model whose price it does not know', () => {
    expect(costUsd('claude-sonnet-5-5', usage)).toBeNull();
    expect(costUsd('claude-opus-4-50', usage)).toBeNull();
    expect(costUsd('claude-opus-4-5-fast', usage)).toBeNull();
    expect(costUsd('replay:script.yaml', usage)).toBeNull();
  });
});
