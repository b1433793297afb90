// The SDK's transport: the conversation by marker, each message serialised once, and the
// body written in pieces, which must add up to the JSON the SDK would have sent.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { bodyText, ConversationBytes, ConversationWire, createHttpFetch } from '../../src/agent/anthropic-transport.js';

const closers: (() => void)[] = [];
afterEach(() => closers.splice(0).forEach((close) => close()));

/** A server on 127.0.0.1 that records each request's body and answers with `reply`. */
async function serve(reply: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ url: string; bodies: { headers: IncomingMessage['headers']; text: string }[] }> {
  const bodies: { headers: IncomingMessage['headers']; text: string }[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      bodies.push({ headers: req.headers, text: Buffer.concat(parts).toString('utf8') });
      reply(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`, bodies };
}

const conversation = () => [
  { role: 'user', content: 'Fix the fee — café, 漢字' },
  { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'true' } }] },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'x'.repeat(200_000) }] },
];

describe('ConversationWire', () => {
  it('expands the marker the SDK serialised into the JSON of the messages, with the length in bytes', () => {
    const wire = new ConversationWire();
    const messages = conversation();
    const { messages: marked, release } = wire.mark([...messages]);
    const text = JSON.stringify({ model: 'm', max_tokens: 10, messages: marked, stream: true });
    expect(text.length).toBeLessThan(200);
    const body = wire.expand(text)!;
    const joined = bodyText(body);
    expect(joined).toBe(JSON.stringify({ model: 'm', max_tokens: 10, messages, stream: true }));
    expect(body.bytes).toBe(Buffer.byteLength(joined));
    release();
    expect(wire.expand(text)).toBeNull();
    expect(wire.expand('{"messages":[]}')).toBeNull();
  });

  it('gives the SDK nothing to walk, unless it records what it sends', () => {
    const wire = new ConversationWire();
    const messages = conversation();
    const hidden = wire.mark(messages).messages;
    // The SDK scans and copies the array it gets on every request: it gets an empty one.
    expect(hidden).toHaveLength(0);
    expect(bodyText(wire.expand(JSON.stringify({ messages: hidden }))!)).toBe(JSON.stringify({ messages }));
    const visible = wire.mark(messages, { visible: true }).messages;
    expect(visible).toEqual(messages);
    expect(visible).not.toBe(messages);
    expect(bodyText(wire.expand(JSON.stringify({ messages: visible }))!)).toBe(JSON.stringify({ messages }));
    // The caller's own array is left as it was.
    expect(JSON.stringify(messages)).not.toContain('corral-conversation');
  });

  it('serialises a message once, and again when its content was swapped', () => {
    const wire = new ConversationWire();
    const messages = conversation();
    const send = () => bodyText(wire.expand(JSON.stringify({ messages: wire.mark([...messages]).messages }))!);
    const first = send();
    expect(send()).toBe(first);
    messages[2]!.content = [{ type: 'tool_result', tool_use_id: 't1', content: '(cleared)' }];
    expect(JSON.parse(send()).messages[2].content[0].content).toBe('(cleared)');
  });
});

describe('ConversationBytes', () => {
  const text = (bytes: Uint8Array) => `[${Buffer.from(bytes).toString('utf8')}]`;
  /** A message that counts how often it is serialised while `counts.on`. */
  const counted = (role: string, content: unknown, counts: { on: boolean; by: Map<string, number> }, name: string) => ({
    role,
    content,
    toJSON() {
      if (counts.on) counts.by.set(name, (counts.by.get(name) ?? 0) + 1);
      return { role, content };
    },
  });

  it('serialises each message once as a run goes on, the moved breakpoint included', () => {
    const counts = { on: true, by: new Map<string, number>() };
    const kept = new ConversationBytes();
    const first = counted('user', 'Fix the fee — café, 漢字 🐎', counts, 'task');
    const conversation: object[] = [first];
    for (let turn = 0; turn < 4; turn++) {
      conversation.push(counted('assistant', [{ type: 'tool_use', id: `t${turn}`, name: 'Bash', input: { command: 'true' } }], counts, `call${turn}`));
      // Each request marks the newest user message: a new object at the end, the one before back to its own.
      const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: `t${turn}`, content: `ok ${turn}` }] };
      conversation.push(result);
      const sent = [...conversation.slice(0, -1), { ...result, content: [{ ...result.content[0]!, cache_control: { type: 'ephemeral' } }] }];
      const { bytes, release } = kept.lend(sent);
      counts.on = false;
      expect(text(bytes)).toBe(JSON.stringify(sent));
      counts.on = true;
      release();
    }
    expect(counts.by.get('task')).toBe(1);
    expect([0, 1, 2, 3].map((turn) => counts.by.get(`call${turn}`))).toEqual([1, 1, 1, 1]);
  });

  it('never changes the bytes of a body still being written, and reuses them once it is', () => {
    const kept = new ConversationBytes();
    const conversation: { role: string; content: unknown }[] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: [{ type: 'text', text: 'a'.repeat(100) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'long output '.repeat(50) }] },
    ];
    const out = kept.lend(conversation);
    const before = text(out.bytes);
    // A context edit swaps an old message's content while the first body is still out.
    conversation[2] = { ...conversation[2]!, content: [{ type: 'tool_result', tool_use_id: 't1', content: '(cleared)' }] };
    const next = kept.lend(conversation);
    expect(text(out.bytes)).toBe(before);
    expect(text(next.bytes)).toBe(JSON.stringify(conversation));
    expect(next.bytes.buffer).not.toBe(out.bytes.buffer);
    out.release();
    next.release();
    next.release(); // a second call (finish, then close) changes nothing
    // Nothing out: the next edit rewrites the kept bytes where they are.
    conversation[1] = { ...conversation[1]!, content: [{ type: 'text', text: 'b' }] };
    const third = kept.lend(conversation);
    expect(third.bytes.buffer).toBe(next.bytes.buffer);
    expect(text(third.bytes)).toBe(JSON.stringify(conversation));
    third.release();
    // A shorter conversation (a compaction) and an empty one.
    expect(text(kept.lend(conversation.slice(0, 1)).bytes)).toBe(JSON.stringify(conversation.slice(0, 1)));
    expect(text(kept.lend([]).bytes)).toBe('[]');
  });

  it('grows past its first buffer without losing what it kept', () => {
    const kept = new ConversationBytes();
    const conversation: object[] = [];
    for (let i = 0; i < 40; i++) {
      conversation.push({ role: i % 2 ? 'user' : 'assistant', content: `${i} ${'é'.repeat(3000)}` });
      const { bytes, release } = kept.lend(conversation);
      if (i % 7 === 0) expect(text(bytes)).toBe(JSON.stringify(conversation));
      release();
    }
    const { bytes } = kept.lend(conversation);
    expect(bytes.length).toBe(Buffer.byteLength(JSON.stringify(conversation)) - 2);
    expect(text(bytes)).toBe(JSON.stringify(conversation));
  });
});

describe('createHttpFetch', () => {
  it('writes the expanded body over node:http, with its content-length, and streams the reply', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: ping\n');
      res.end('data: {}\n\n');
    });
    const wire = new ConversationWire();
    const messages = conversation();
    const fetchOver = createHttpFetch(wire, {});
    const body = JSON.stringify({ messages: wire.mark([...messages]).messages });
    const response = await fetchOver(server.url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-test': 'yes' }, body });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe('event: ping\ndata: {}\n\n');
    const [seen] = server.bodies;
    expect(seen!.text).toBe(JSON.stringify({ messages }));
    expect(Number(seen!.headers['content-length'])).toBe(Buffer.byteLength(seen!.text));
    expect(seen!.headers['x-test']).toBe('yes');
  });

  /**
   * Sends requests of a conversation (`send`, given the body to send), then edits its middle
   * message: with every request's bytes given back, the edit is made where the bytes are.
   */
  async function expectBytesGivenBack(send: (fetchOver: typeof fetch, body: () => string) => Promise<void>): Promise<void> {
    const wire = new ConversationWire();
    const messages: { role: string; content: unknown }[] = conversation();
    const marked = () => JSON.stringify({ messages: wire.mark(messages).messages });
    const before = wire.expand(marked())!;
    before.release!();
    await send(createHttpFetch(wire, {}), marked);
    messages[1] = { ...messages[1]!, content: [{ type: 'text', text: 'edited' }] };
    const after = wire.expand(marked())!;
    expect(after.messages.buffer).toBe(before.messages.buffer);
    expect(bodyText(after)).toBe(JSON.stringify({ messages }));
  }

  it('gives the conversation bytes back once the body is written, so the next request reuses them', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    await expectBytesGivenBack(async (fetchOver, body) => {
      expect(await (await fetchOver(server.url, { method: 'POST', body: body() })).text()).toBe('ok');
      expect(server.bodies[0]!.text).toBe(JSON.stringify({ messages: conversation() }));
    });
  });

  it('keeps the bytes of a body the socket has not taken yet, whatever the next request changes', async () => {
    let readBody!: () => void;
    const reading = new Promise<void>((resolve) => (readBody = resolve));
    let arrived!: () => void;
    const headersIn = new Promise<void>((resolve) => (arrived = resolve));
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      arrived();
      // The body stays in the pipe until the test says: the client cannot finish writing it.
      void reading.then(() => {
        const parts: Buffer[] = [];
        req.on('data', (part: Buffer) => parts.push(part));
        req.on('end', () => (bodies.push(Buffer.concat(parts).toString('utf8')), res.end('ok')));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => server.close());
    const wire = new ConversationWire();
    const messages: { role: string; content: unknown }[] = [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: [{ type: 'text', text: 'y'.repeat(16 * 1024 * 1024) }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'the original result' }] },
    ];
    const sent = JSON.stringify({ messages });
    const marked = () => JSON.stringify({ messages: wire.mark(messages).messages });
    const response = createHttpFetch(wire, {})(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/messages`, { method: 'POST', body: marked() });
    await headersIn;
    // The next request edits the last message, whose bytes are still waiting to be written.
    messages[2] = { ...messages[2]!, content: [{ type: 'tool_result', tool_use_id: 't1', content: 'AN EDITED RESULT!!!' }] };
    expect(bodyText(wire.expand(marked())!)).toBe(JSON.stringify({ messages }));
    readBody();
    expect(await (await response).text()).toBe('ok');
    expect(bodies[0] === sent).toBe(true);
  });

  it('gives the bytes back when the request is refused before it exists, or cannot connect', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    await expectBytesGivenBack(async (fetchOver, body) => {
      // A header value no request may carry, then a port nothing listens on.
      await expect(fetchOver(server.url, { method: 'POST', headers: { 'x-test': 'a\u0000b' }, body: body() })).rejects.toThrow();
      await expect(fetchOver('http://127.0.0.1:9/v1/messages', { method: 'POST', body: body() })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    });
  });

  it('says once when the whole body is on its way, before any reply comes', async () => {
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const server = await serve((_req, res) => void answered.then(() => res.end('ok')));
    const wire = new ConversationWire();
    let sent = 0;
    let onWay!: () => void;
    const onWayNow = new Promise<void>((resolve) => (onWay = resolve));
    const body = JSON.stringify({ messages: wire.mark(conversation(), { sent: () => (sent++, onWay()) }).messages });
    const response = createHttpFetch(wire, {})(server.url, { method: 'POST', body });
    // The server holds its reply until told: the call can only have been told of the send.
    await onWayNow;
    expect(sent).toBe(1);
    answer();
    expect(await (await response).text()).toBe('ok');
    expect(sent).toBe(1);
    expect(server.bodies[0]!.text).toBe(JSON.stringify({ messages: conversation() }));
  });

  it('decompresses a compressed reply, as the built-in fetch does', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      res.end(gzipSync('{"type":"error"}'));
    });
    const response = await createHttpFetch(undefined, {})(server.url, { method: 'POST', body: '{}' });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ type: 'error' });
  });

  it('leaves a proxied request to the built-in fetch, the marker expanded', async () => {
    const server = await serve((_req, res) => res.end('ok'));
    const wire = new ConversationWire();
    const messages = conversation();
    // The built-in fetch of Node 20 and 22 does not read the variable itself: the request goes straight to the server.
    const fetchOver = createHttpFetch(wire, { HTTPS_PROXY: 'http://127.0.0.1:9' });
    let sent = 0;
    const response = await fetchOver(server.url, { method: 'POST', body: JSON.stringify({ messages: wire.mark([...messages], { sent: () => sent++ }).messages }) });
    expect(await response.text()).toBe('ok');
    expect(server.bodies[0]!.text).toBe(JSON.stringify({ messages }));
    // The built-in fetch says nothing of its writes: handed over counts as sent.
    expect(sent).toBe(1);
  });

  it('fails with the connection error and its code when nothing listens', async () => {
    const server = await serve((_req, res) => res.end());
    closers.splice(0).forEach((close) => close());
    await expect(createHttpFetch(undefined, {})(server.url, { method: 'POST', body: '{}' })).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
