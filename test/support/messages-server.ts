// A local stand-in for the Anthropic Messages API, so tests of the real SDK path (and
// end-to-end tests of the CLI, via ANTHROPIC_BASE_URL=url) never reach the internet.
// It plays a script of replies and faults in order, records what the client sent, and
// speaks the wire format the SDK parses: JSON, or the server-sent events of a stream.
// It can also break that format on purpose (a reset connection, a cut or garbled stream,
// a body that is not JSON), for the fault tests.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  ContentBlock,
  Message,
  MessageCreateParamsBase,
  StopReason,
  Usage,
} from '@anthropic-ai/sdk/resources/messages/messages.js';

export type ScriptBlock =
  | { type: 'text'; text: string }
  /** `id` defaults to `toolu_test_<reply>_<block>`. */
  | { type: 'tool_use'; id?: string; name: string; input: unknown };

/** Token counts as the API reports them; `null` cache counts are sent as null. */
export interface ScriptUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_read_input_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
}

/** One assistant message. */
export interface ScriptReply {
  content: ScriptBlock[];
  /** Defaults to `tool_use` when a block is a tool_use, else `end_turn`. */
  stop_reason?: string;
  /** Defaults: 10 input, 5 output, 0 cache read and write. */
  usage?: ScriptUsage;
  /** Defaults to the model the request named. */
  model?: string;
  /** Hold the response this long before answering (for abort and timeout tests). */
  delayMs?: number;
}

/**
 * An HTTP error. `body` defaults to the API's error shape for the status. `headers` are
 * added to `request-id` and to `retry-after-ms: 1`, which keeps the SDK's retry waits
 * short; give `retry-after-ms` another value to change that, or null to leave it out
 * (so the SDK reads `retry-after` instead).
 */
export interface ScriptFault {
  status: number;
  body?: unknown;
  headers?: Record<string, string | null>;
  delayMs?: number;
}

/**
 * A fault below the API's error shapes, where the wire itself breaks:
 * - `reset`: the request is read, then the connection is destroyed before any response
 *   (the SDK sees a connection error, which it retries).
 * - `raw`: `body` sent verbatim as the response (default 200, `application/json`), e.g.
 *   JSON cut in half.
 * - `stream`: the reply's event stream, sent as usual for its first `afterEvents` events
 *   (default 3: message_start, the first content_block_start and a ping), then broken by
 *   `then`: `reset` destroys the connection, `end` ends the response cleanly with no
 *   message_stop, `garbage` sends a `content_block_delta` whose data is not JSON and ends,
 *   `error` sends the API's mid-stream `error` event (overloaded_error) and ends, `stall`
 *   sends nothing more and holds the response open until the client goes away. A reply
 *   with no more events than `afterEvents` is sent whole.
 */
export type ScriptWireFault =
  | { wire: 'reset'; delayMs?: number }
  | { wire: 'raw'; status?: number; contentType?: string; body: string; delayMs?: number }
  | { wire: 'stream'; reply: ScriptReply; afterEvents?: number; then: StreamCut['then']; delayMs?: number };

export type ScriptStep = ScriptReply | ScriptFault | ScriptWireFault;

/** A well-formed `POST /v1/messages` as received; anything else is answered 400/404 and not recorded. */
export interface RecordedRequest {
  method: string;
  path: string;
  /** Lower-case names, as node:http gives them. */
  headers: IncomingHttpHeaders;
  /** The parsed JSON body, as the client sent it (not validated). */
  body: MessageCreateParamsBase;
  /** When the request had been read (Date.now()), to see how long the SDK waited between retries. */
  receivedAt: number;
}

export interface MessagesServer {
  /** `http://127.0.0.1:<port>`: set it as ANTHROPIC_BASE_URL. */
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startMessagesServer(script: readonly ScriptStep[]): Promise<MessagesServer> {
  const requests: RecordedRequest[] = [];
  let served = 0; // per server, so each test's ids and script position start over

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'api_error', `messages-server: ${String(error)}`, 'req_test_failed');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/messages') {
      return sendError(res, 404, 'not_found_error', `messages-server: no route ${req.method} ${path}`, 'req_test_404');
    }
    let body: MessageCreateParamsBase;
    try {
      body = JSON.parse(raw) as MessageCreateParamsBase;
    } catch {
      return sendError(res, 400, 'invalid_request_error', 'messages-server: the body is not JSON', 'req_test_400');
    }
    requests.push({ method: req.method, path, headers: req.headers, body, receivedAt: Date.now() });

    const n = ++served;
    const requestId = `req_test_${n}`;
    const step = script[n - 1];
    if (!step) {
      // Not retried (x-should-retry), so a test that asks for more than it scripted fails at once.
      return sendError(
        res,
        500,
        'api_error',
        `messages-server: the script has no response for request #${n} (it has ${script.length})`,
        requestId,
        { 'x-should-retry': 'false' },
      );
    }
    if (step.delayMs) await wait(step.delayMs, res);
    if (res.destroyed) return; // the client gave up (abort, timeout) while we waited

    if ('wire' in step) return sendWireFault(res, step, n, body.model, requestId);
    if ('status' in step) return sendFault(res, step, requestId);
    const message = toMessage(step, n, body.model);
    if ((body as { stream?: unknown }).stream === true) return sendStream(res, message, requestId);
    sendJson(res, 200, message, { 'request-id': requestId });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    // Safe to call twice (a test may close early to make the port unreachable).
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets and held responses would keep close() waiting.
        server.closeAllConnections();
      }),
  };
}

// ---- replies ----------------------------------------------------------------------------

function toMessage(reply: ScriptReply, n: number, requestedModel: string): Message {
  const content = reply.content.map((block, i): ContentBlock =>
    block.type === 'text'
      ? { type: 'text', text: block.text, citations: null }
      : { type: 'tool_use', id: block.id ?? `toolu_test_${n}_${i}`, name: block.name, input: block.input, caller: { type: 'direct' } },
  );
  const stopReason = reply.stop_reason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn');
  const usage = reply.usage ?? {};
  return {
    id: `msg_test_${n}`,
    type: 'message',
    role: 'assistant',
    model: reply.model ?? requestedModel,
    content,
    // The script may name a stop reason the SDK's type does not list yet; the wire is a string.
    stop_reason: stopReason as StopReason,
    stop_sequence: null,
    stop_details: null,
    container: null,
    diagnostics: null,
    usage: toUsage(usage),
  };
}

function toUsage(usage: ScriptUsage): Usage {
  const cacheWrite = usage.cache_creation_input_tokens === undefined ? 0 : usage.cache_creation_input_tokens;
  return {
    input_tokens: usage.input_tokens ?? 10,
    output_tokens: usage.output_tokens ?? 5,
    cache_read_input_tokens: usage.cache_read_input_tokens === undefined ? 0 : usage.cache_read_input_tokens,
    cache_creation_input_tokens: cacheWrite,
    cache_creation: cacheWrite === null ? null : { ephemeral_5m_input_tokens: cacheWrite, ephemeral_1h_input_tokens: 0 },
    inference_geo: null,
    output_tokens_details: null,
    server_tool_use: null,
    service_tier: 'standard',
    speed: null,
  };
}

/**
 * The event sequence of a real streamed message: message_start (no content, input and
 * cache usage), then per block content_block_start / content_block_delta... /
 * content_block_stop with a ping after the first start, then message_delta (stop_reason,
 * output_tokens) and message_stop. Text comes in a few text_delta chunks, tool input as
 * input_json_delta chunks cut mid-token, after a start whose input is `{}`.
 */
async function sendStream(res: ServerResponse, message: Message, requestId: string, cut?: StreamCut): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'request-id': requestId });
  let sent = 0;
  let broken = false;
  const send = async (event: string, data: object): Promise<void> => {
    if (broken || res.destroyed || res.writableEnded) return;
    if (cut && sent === cut.afterEvents) {
      broken = true;
      return breakStream(res, cut.then);
    }
    sent += 1;
    // Written (handed to the socket) before the next event, and each as its own chunk, so
    // the client's SSE decoder works across chunks and a reset comes after what was sent.
    await new Promise((resolve) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`, () => setImmediate(resolve)));
  };

  await send('message_start', {
    type: 'message_start',
    message: { ...message, content: [], stop_reason: null, stop_sequence: null, usage: { ...message.usage, output_tokens: 1 } },
  });
  if (message.content.length === 0) await send('ping', { type: 'ping' });

  for (const [index, block] of message.content.entries()) {
    if (block.type === 'text') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { ...block, text: '' } });
      if (index === 0) await send('ping', { type: 'ping' });
      for (const text of chunks(block.text)) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      }
    } else if (block.type === 'tool_use') {
      await send('content_block_start', { type: 'content_block_start', index, content_block: { ...block, input: {} } });
      if (index === 0) await send('ping', { type: 'ping' });
      // The API opens a tool's input with an empty partial_json.
      for (const partial_json of ['', ...chunks(JSON.stringify(block.input))]) {
        await send('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
      }
    }
    await send('content_block_stop', { type: 'content_block_stop', index });
  }

  await send('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  });
  await send('message_stop', { type: 'message_stop' });
  if (!broken && !res.destroyed) res.end();
}

interface StreamCut {
  afterEvents: number;
  then: 'reset' | 'end' | 'garbage' | 'error' | 'stall';
}

/** Resolves once the stream is broken; a stall holds it open until the client goes away. */
async function breakStream(res: ServerResponse, how: StreamCut['then']): Promise<void> {
  if (how === 'reset') {
    res.destroy();
    return;
  }
  if (how === 'stall') {
    await new Promise((resolve) => res.once('close', resolve));
    return;
  }
  const last =
    how === 'garbage'
      ? 'event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {not json\n\n'
      : how === 'error'
        ? `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`
        : '';
  res.end(last);
}

function sendWireFault(res: ServerResponse, fault: ScriptWireFault, n: number, requestedModel: string, requestId: string): Promise<void> | void {
  switch (fault.wire) {
    case 'reset':
      res.destroy();
      return;
    case 'raw':
      res.writeHead(fault.status ?? 200, { 'content-type': fault.contentType ?? 'application/json', 'request-id': requestId });
      res.end(fault.body);
      return;
    case 'stream':
      return sendStream(res, toMessage(fault.reply, n, requestedModel), requestId, { afterEvents: fault.afterEvents ?? 3, then: fault.then });
  }
}

/** Three pieces or fewer, cut at arbitrary places (mid-word, mid-JSON-token). */
function chunks(text: string): string[] {
  if (text.length === 0) return [];
  const size = Math.ceil(text.length / 3);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

// ---- errors -----------------------------------------------------------------------------

const ERROR_TYPES: Readonly<Record<number, string>> = Object.freeze({
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
});

function sendFault(res: ServerResponse, fault: ScriptFault, requestId: string): void {
  const type = ERROR_TYPES[fault.status] ?? 'api_error';
  const body = fault.body ?? errorBody(type, `messages-server: scripted ${fault.status} ${type}`, requestId);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries({ 'request-id': requestId, 'retry-after-ms': '1', ...fault.headers })) {
    if (value !== null) headers[name] = value;
  }
  sendJson(res, fault.status, body, headers);
}

function sendError(
  res: ServerResponse,
  status: number,
  type: string,
  message: string,
  requestId: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, errorBody(type, message, requestId), { 'request-id': requestId, ...headers });
}

function errorBody(type: string, message: string, requestId: string): object {
  return { type: 'error', error: { type, message }, request_id: requestId };
}

function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  res.writeHead(status, { ...headers, 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

// ---- plumbing ---------------------------------------------------------------------------

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** Resolves after `ms`, or as soon as the client goes away. */
function wait(ms: number, res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    res.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
