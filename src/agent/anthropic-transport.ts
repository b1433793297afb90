// The SDK's `fetch`, over node:http and node:https, and the conversation sent without
// building it whole. A Messages API request carries the whole conversation: the SDK made
// one JSON text of it per request (JSON.stringify of the body), and the built-in fetch
// encoded that text into bytes and copied the bytes again, three copies of a conversation
// that only grows, each request, most of them too large for the young generation. Here
// the SDK gets the messages with a marker as their JSON, each message is serialised once
// for the run (messages are not changed once in the conversation), and the transport
// writes the body in pieces: prefix, the messages' JSON, suffix. Anything else (a body
// that is not text, a proxy set in the environment) goes to the built-in fetch, with the
// marker expanded.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { Headers, HttpResponse } from './fetch-classes.js';
import { PerMessage } from './per-message.js';

/** Environment variables that route requests through a proxy: with one set, the built-in fetch (and Node's) decide. */
const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NODE_USE_ENV_PROXY'];
/** Pieces are written in batches of about this many characters: few system calls, each batch young garbage. */
const WRITE_BATCH = 64 * 1024;

interface MessageJson {
  /** What was serialised: a message whose content was swapped is serialised again. */
  content: unknown;
  json: string;
  bytes: number;
}

/**
 * A request body in pieces, and its length in bytes: `head`, then the messages' JSON
 * joined by commas, then `tail`. The messages are the very strings kept for the run, so
 * writing them makes no copy that outlives the request.
 */
export interface Body {
  head: string;
  messages: readonly string[];
  tail: string;
  bytes: number;
  /** Called once the body is on its way: its last bytes handed to the operating system. */
  sent?: () => void;
}

/** The body as one text. */
export function bodyText(body: Body): string {
  return body.head + body.messages.join(',') + body.tail;
}

/**
 * Conversations handed to the SDK by marker, and their JSON, one per model. `mark` gives
 * the array the SDK is to send; the transport finds its marker in the SDK's body text.
 */
export class ConversationWire {
  readonly #token = `corral-conversation-${randomUUID()}`;
  readonly #marker = new RegExp(`"${this.#token}-(\\d+)"`);
  #next = 0;
  readonly #pending = new Map<string, { messages: readonly object[]; sent?: () => void }>();
  readonly #json = new WeakMap<object, MessageJson>();
  /** Each message's JSON and its bytes (with the comma before it, but for the first), kept from one request to the next. */
  readonly #pieces = new PerMessage<object, string>(
    (message) => this.#serialised(message).json,
    (_json, message, index) => this.#serialised(message).bytes + (index > 0 ? 1 : 0),
  );

  /**
   * What the SDK should get in place of `messages` until `release`: an empty array whose
   * JSON is the marker. The SDK walks the array it is given twice a request (a scan of
   * every block for its helpers' header, a copy into the stream's own list), which grew
   * with the conversation; an empty one leaves it nothing to walk. `visible` gives it a
   * copy of the messages instead, for a caller whose SDK records them (tracing spans).
   */
  mark<T extends object>(messages: readonly T[], { visible = false, sent }: { visible?: boolean; sent?: () => void } = {}): { messages: T[]; release(): void } {
    const id = String(this.#next++);
    const marker = `${this.#token}-${id}`;
    const standIn: T[] = visible ? [...messages] : [];
    // JSON.stringify asks an object (an array too) for its toJSON first: the SDK's text carries the marker.
    Object.defineProperty(standIn, 'toJSON', { value: () => marker, enumerable: false });
    this.#pending.set(id, { messages, ...(sent ? { sent } : {}) });
    return { messages: standIn, release: () => this.#pending.delete(id) };
  }

  /** The body of `text` in pieces, the marked conversation in it expanded; null when it has no marker of ours. */
  expand(text: string): Body | null {
    const found = this.#marker.exec(text);
    const marked = found ? this.#pending.get(found[1]!) : undefined;
    if (!found || marked === undefined) return null;
    const { messages, sent } = marked;
    const prefix = text.slice(0, found.index);
    const suffix = text.slice(found.index + found[0].length);
    const pieces = this.#pieces.over(messages);
    // A copy of the list (its strings are shared): the next request may change the kept one while this one is written.
    return { head: `${prefix}[`, messages: pieces.results.slice(), tail: `]${suffix}`, bytes: Buffer.byteLength(prefix) + Buffer.byteLength(suffix) + 2 + pieces.size, ...(sent ? { sent } : {}) };
  }

  #serialised(message: object): MessageJson {
    const content = (message as { content?: unknown }).content;
    const known = this.#json.get(message);
    if (known !== undefined && known.content === content) return known;
    const json = JSON.stringify(message);
    const fresh = { content, json, bytes: Buffer.byteLength(json) };
    this.#json.set(message, fresh);
    return fresh;
  }
}

export function createHttpFetch(wire?: ConversationWire, env: NodeJS.ProcessEnv = process.env): typeof fetch {
  const proxied = PROXY_VARIABLES.some((name) => env[name] || env[name.toLowerCase()]);
  return (input, init) => {
    const text = init?.body;
    const body = typeof text === 'string' ? (wire?.expand(text) ?? { head: text, messages: [], tail: '', bytes: Buffer.byteLength(text) }) : undefined;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const protocol = url === undefined ? undefined : new URL(url).protocol;
    if (proxied || url === undefined || (protocol !== 'http:' && protocol !== 'https:') || (text !== undefined && text !== null && body === undefined)) {
      // The built-in fetch tells nothing of its writes: handed over is as good as sent.
      body?.sent?.();
      return fetch(input, body ? { ...init, body: bodyText(body) } : init);
    }
    return request(new URL(url), init ?? {}, body);
  };
}

function request(url: URL, init: RequestInit, body: Body | undefined): Promise<Response> {
  const headers: Record<string, string> = {};
  new Headers(init.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => (headers[name] = value));
  if (body !== undefined) headers['content-length'] = String(body.bytes);
  const method = init.method ?? 'GET';
  return new Promise<Response>((resolve, reject) => {
    const options = { method, headers, ...(init.signal ? { signal: init.signal } : {}) };
    const onResponse = (res: http.IncomingMessage): void => {
      const status = res.statusCode ?? 0;
      const responseHeaders = new Headers();
      for (let i = 0; i < res.rawHeaders.length; i += 2) responseHeaders.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
      const empty = method === 'HEAD' || status === 204 || status === 304;
      if (empty) res.resume();
      const stream = empty ? null : (Readable.toWeb(decoded(res)) as ReadableStream<Uint8Array>);
      try {
        // The SDK reads a reply through the fetch standard's Response, of which this is the part it uses.
        resolve(new HttpResponse(stream, { status, statusText: res.statusMessage ?? '', headers: responseHeaders, url: url.href }) as unknown as Response);
      } catch (error) {
        // A status outside 200-599, which a Response cannot have: the call fails as a bad response.
        res.destroy();
        reject(error);
      }
    };
    const req = url.protocol === 'https:' ? https.request(url, options, onResponse) : http.request(url, options, onResponse);
    req.on('error', reject);
    if (body?.sent) req.once('finish', body.sent);
    writeBody(req, body).catch((error: unknown) => req.destroy(error instanceof Error ? error : new Error(String(error))));
  });
}

/** The body in batches, waiting whenever the socket is behind, so no more than a batch or two is held for it. */
async function writeBody(req: http.ClientRequest, body: Body | undefined): Promise<void> {
  if (body === undefined) return void req.end();
  let batch = body.head;
  for (const [index, json] of body.messages.entries()) {
    // Each batch is a new join, dropped once written: the kept strings are only read (a
    // kept join would be flattened by the write, and its copy live as long as the message).
    batch = index > 0 ? `${batch},${json}` : batch + json;
    if (batch.length < WRITE_BATCH) continue;
    if (!req.write(batch)) await new Promise((resolve) => (req.once('drain', resolve), req.once('close', resolve)));
    batch = '';
    if (req.destroyed) return;
  }
  req.end(batch + body.tail);
}

/** The body as sent, or decompressed when the server compressed it (as the built-in fetch does). */
function decoded(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip() : encoding === 'deflate' ? zlib.createInflate() : encoding === 'br' ? zlib.createBrotliDecompress() : undefined;
  if (decoder === undefined) return res;
  // An error of either side (a reset socket, a corrupt body) ends the other with it.
  res.on('error', (error) => decoder.destroy(error));
  return res.pipe(decoder);
}
