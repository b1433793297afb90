// The SDK's `fetch`, over node:http and node:https, and the conversation sent without
// building it whole. A Messages API request carries the whole conversation: the SDK made
// one JSON text of it per request (JSON.stringify of the body), and the built-in fetch
// encoded that text into bytes and copied the bytes again, three copies of a conversation
// that only grows, each request, most of them too large for the young generation. Here
// the SDK gets the messages with a marker as their JSON, the conversation's JSON is kept
// as bytes from one request to the next (each message serialised and encoded once), and
// the transport writes the body in three pieces: prefix, those bytes, suffix. Anything
// else (a body that is not text, a proxy set in the environment) goes to the built-in
// fetch, with the marker expanded.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { Headers, HttpResponse } from './fetch-classes.js';
import { SeenMessages } from './per-message.js';

const NO_BYTES = new Uint8Array(0);

/** Environment variables that route requests through a proxy: with one set, the built-in fetch (and Node's) decide. */
const PROXY_VARIABLES = ['HTTPS_PROXY', 'HTTP_PROXY', 'ALL_PROXY', 'NODE_USE_ENV_PROXY'];
/** The smallest buffer the conversation's bytes are kept in. */
const MIN_CAPACITY = 64 * 1024;
const COMMA = 0x2c;

/**
 * A request body in pieces, and its length in bytes: `head`, then the messages' JSON
 * joined by commas (UTF-8), then `tail`. `messages` is a view of the bytes kept for the
 * run: they stay as they are until `release`, and are not to be changed.
 */
export interface Body {
  head: string;
  messages: Uint8Array;
  tail: string;
  bytes: number;
  /** Called once the body is on its way: its last bytes handed to the operating system. */
  sent?: () => void;
  /** Says the body's bytes are no longer read (written, or the request given up); more calls do nothing. */
  release?: () => void;
}

/** The body as one text. */
export function bodyText(body: Body): string {
  return body.head + Buffer.from(body.messages.buffer, body.messages.byteOffset, body.messages.byteLength).toString('utf8') + body.tail;
}

/**
 * A conversation's JSON (its messages joined by commas, without the brackets) as UTF-8
 * bytes, kept from one request to the next up to the first message that changed
 * (SeenMessages: a turn appends, the next request moves the cache breakpoint, a context
 * edit swaps an old message's content). Only the rest is serialised: a request costs what
 * it added, and writing it encodes nothing, where each request used to join and encode
 * the whole conversation's text again.
 *
 * The bytes are lent to a request body until it releases them. A change that rewrites
 * bytes already lent (not an append) while a body is still out goes to a new buffer, so a
 * body being written never changes under its request.
 */
export class ConversationBytes {
  #buffer: Buffer = Buffer.alloc(0);
  #length = 0;
  readonly #seen = new SeenMessages<object>();
  /** #ends[i]: where message i's bytes end; the comma before it (every message but the first) is counted with it. */
  #ends: number[] = [];
  /** Bodies holding a view of the bytes, not yet released. */
  #lent = 0;

  /** The bytes of `messages` and a `release` to call once they are written (or will not be). */
  lend(messages: readonly object[]): { bytes: Uint8Array; release: () => void } {
    const same = this.#seen.update(messages);
    const kept = same > 0 ? this.#ends[same - 1]! : 0;
    if (same < this.#ends.length && this.#lent > 0) this.#buffer = this.#copied(kept, this.#buffer.length);
    this.#ends.length = same;
    this.#length = kept;
    for (let index = same; index < messages.length; index++) {
      const json = JSON.stringify(messages[index]);
      const comma = index > 0 ? 1 : 0;
      const needed = this.#length + comma + Buffer.byteLength(json);
      if (needed > this.#buffer.length) this.#buffer = this.#copied(this.#length, Math.max(needed, 2 * this.#buffer.length, MIN_CAPACITY));
      if (comma) this.#buffer[this.#length++] = COMMA;
      this.#length += this.#buffer.write(json, this.#length);
      this.#ends.push(this.#length);
    }
    this.#lent++;
    let lent = true;
    const release = (): void => {
      if (lent) this.#lent--;
      lent = false;
    };
    return { bytes: this.#buffer.subarray(0, this.#length), release };
  }

  /** A new buffer of `capacity` bytes that starts with the first `length` bytes kept. */
  #copied(length: number, capacity: number): Buffer {
    const fresh = Buffer.allocUnsafe(capacity);
    this.#buffer.copy(fresh, 0, 0, length);
    return fresh;
  }
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
  readonly #bytes = new ConversationBytes();

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
    const { bytes, release } = this.#bytes.lend(messages);
    return { head: `${prefix}[`, messages: bytes, tail: `]${suffix}`, bytes: Buffer.byteLength(prefix) + Buffer.byteLength(suffix) + 2 + bytes.length, ...(sent ? { sent } : {}), release };
  }
}

export function createHttpFetch(wire?: ConversationWire, env: NodeJS.ProcessEnv = process.env): typeof fetch {
  const proxied = PROXY_VARIABLES.some((name) => env[name] || env[name.toLowerCase()]);
  return (input, init) => {
    const text = init?.body;
    const body = typeof text === 'string' ? (wire?.expand(text) ?? { head: text, messages: NO_BYTES, tail: '', bytes: Buffer.byteLength(text) }) : undefined;
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
    const protocol = url === undefined ? undefined : new URL(url).protocol;
    if (proxied || url === undefined || (protocol !== 'http:' && protocol !== 'https:') || (text !== undefined && text !== null && body === undefined)) {
      // The built-in fetch tells nothing of its writes: handed over is as good as sent.
      const whole = body ? bodyText(body) : undefined;
      body?.release?.();
      body?.sent?.();
      return fetch(input, whole !== undefined ? { ...init, body: whole } : init);
    }
    return request(new URL(url), init ?? {}, body);
  };
}

function request(url: URL, init: RequestInit, body: Body | undefined): Promise<Response> {
  try {
    return send(url, init, body);
  } catch (error) {
    // Refused before a request existed (a header Node will not send): its body's bytes are free again.
    body?.release?.();
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function send(url: URL, init: RequestInit, body: Body | undefined): Promise<Response> {
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
    let req: http.ClientRequest;
    try {
      req = url.protocol === 'https:' ? https.request(url, options, onResponse) : http.request(url, options, onResponse);
    } catch (error) {
      body?.release?.();
      return reject(error instanceof Error ? error : new Error(String(error)));
    }
    req.on('error', reject);
    if (body?.sent) req.once('finish', body.sent);
    if (body?.release) {
      // Written, or given up (an error, an abort): the kept bytes may change again.
      req.once('finish', body.release);
      req.once('error', body.release);
      req.once('close', body.release);
    }
    try {
      writeBody(req, body);
    } catch (error) {
      req.destroy(error instanceof Error ? error : new Error(String(error)));
    }
  });
}

/**
 * The body in its three pieces, handed to the socket at once: the conversation's bytes
 * are a view of the kept buffer, which the socket holds until written, not a copy.
 */
function writeBody(req: http.ClientRequest, body: Body | undefined): void {
  if (body === undefined) return void req.end();
  req.write(body.head);
  if (body.messages.length > 0) req.write(body.messages);
  req.end(body.tail);
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
