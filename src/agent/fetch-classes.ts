// Headers and a Response for the SDK's requests, without Node's fetch classes. Node
// defines Headers, Response and FormData as globals that load its fetch implementation
// (undici, about 1 MB of JavaScript) the first time one is touched: 30–50 ms of the main
// thread on this machine, before a run's first model call, for a transport that never
// uses it (anthropic-transport.ts speaks node:http). The bundle gives the SDK these
// classes in place of the globals (scripts/bundle.mjs); the transport builds its replies
// with them. Only what a Messages API call needs is here; the rest of the fetch API
// stays Node's, loaded when something really asks for it.
import { Blob } from 'node:buffer';

type HeaderPairs = Iterable<readonly [string, string]> | Iterable<readonly string[]>;
export type HeadersInput = Headers | HeaderPairs | Record<string, string | readonly string[] | undefined> | null | undefined;

/** RFC 9110 token characters: what a header name may be made of (as the fetch standard checks). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A header value is a byte string without NUL or a line break (fetch standard, "header value"). */
const BAD_HEADER_VALUE = /[\0\r\n]|[^\0-\xff]/;

/**
 * The fetch standard's Headers: names compared without case and listed in lower case and
 * sorted, values trimmed, repeated names joined with ", " (but for set-cookie, listed
 * one by one). An instance of Node's own Headers counts as one of these (`instanceof`),
 * so either kind passes the SDK's checks.
 */
export class Headers {
  readonly #values = new Map<string, string[]>();

  constructor(init?: HeadersInput) {
    if (init === null || init === undefined) return;
    if (typeof (init as Iterable<unknown>)[Symbol.iterator] === 'function') {
      for (const pair of init as Iterable<readonly string[]>) {
        if (pair.length !== 2) throw new TypeError('Headers: each header pair must have a name and a value');
        this.append(pair[0]!, pair[1]!);
      }
      return;
    }
    for (const [name, value] of Object.entries(init as Record<string, unknown>)) {
      if (value !== undefined) this.append(name, String(value));
    }
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return Object.prototype.toString.call(value) === '[object Headers]';
  }

  get [Symbol.toStringTag](): string {
    return 'Headers';
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const values = this.#values.get(key);
    if (values) values.push(headerValue(value));
    else this.#values.set(key, [headerValue(value)]);
  }

  set(name: string, value: string): void {
    this.#values.set(headerName(name), [headerValue(value)]);
  }

  get(name: string): string | null {
    return this.#values.get(headerName(name))?.join(', ') ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get('set-cookie') ?? [])];
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  delete(name: string): void {
    this.#values.delete(headerName(name));
  }

  forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
    for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this);
  }

  *entries(): IterableIterator<[string, string]> {
    for (const name of [...this.#values.keys()].sort()) {
      const values = this.#values.get(name);
      // Deleted by the caller during the iteration: gone from it, as the standard's iterator has it.
      if (values === undefined) continue;
      if (name === 'set-cookie') for (const value of values) yield [name, value];
      else yield [name, values.join(', ')];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [name] of this.entries()) yield name;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }
}

function headerName(name: string): string {
  const text = String(name);
  if (!HEADER_NAME.test(text)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(text)}`);
  return text.toLowerCase();
}

function headerValue(value: string): string {
  // The fetch standard trims HTTP whitespace: tab, line feed, carriage return, space.
  const text = String(value).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, '');
  if (BAD_HEADER_VALUE.test(text)) throw new TypeError(`Headers: invalid value for a header`);
  return text;
}

/**
 * Node's own FormData, loaded only when one is made. The SDK asks every request body
 * whether it is one (`instanceof`); that question alone no longer loads Node's fetch.
 */
export class FormData {
  constructor(...args: unknown[]) {
    const Real = globalThis.FormData as unknown as new (...args: unknown[]) => object;
    return new Real(...args) as FormData;
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    return Object.prototype.toString.call(value) === '[object FormData]';
  }
}

export interface HttpResponseInit {
  status: number;
  statusText?: string;
  headers: Headers;
  url?: string;
}

/**
 * What the transport answers the SDK with: the parts of the fetch standard's Response a
 * client reads (status, headers, the body as a stream or read whole, a clone).
 */
export class HttpResponse {
  readonly status: number;
  readonly statusText: string;
  readonly headers: Headers;
  readonly url: string;
  readonly redirected = false;
  readonly type = 'basic';
  #body: ReadableStream<Uint8Array> | null;
  #used = false;

  constructor(body: ReadableStream<Uint8Array> | null, init: HttpResponseInit) {
    // The range the fetch standard allows a Response; anything else is a broken reply.
    if (!Number.isInteger(init.status) || init.status < 200 || init.status > 599) throw new RangeError(`the server answered with status ${init.status}, outside 200-599`);
    this.status = init.status;
    this.statusText = init.statusText ?? '';
    this.headers = init.headers;
    this.url = init.url ?? '';
    this.#body = body;
  }

  get [Symbol.toStringTag](): string {
    return 'Response';
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#body;
  }

  get bodyUsed(): boolean {
    return this.#used;
  }

  async bytes(): Promise<Uint8Array> {
    if (this.#used) throw new TypeError('Response: body has already been read');
    this.#used = true;
    if (this.#body === null) return new Uint8Array(0);
    const chunks: Uint8Array[] = [];
    for await (const chunk of this.#body as unknown as AsyncIterable<Uint8Array>) chunks.push(chunk);
    // A buffer of its own, as the standard's: Buffer.concat may hand out a slice of Node's shared pool.
    const whole = Buffer.concat(chunks);
    return new Uint8Array(whole.buffer.slice(whole.byteOffset, whole.byteOffset + whole.byteLength));
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return (await this.bytes()).buffer as ArrayBuffer;
  }

  async text(): Promise<string> {
    return new TextDecoder().decode(await this.bytes());
  }

  async json(): Promise<unknown> {
    return JSON.parse(await this.text()) as unknown;
  }

  async blob(): Promise<Blob> {
    return new Blob([await this.bytes()], { type: this.headers.get('content-type') ?? '' });
  }

  clone(): HttpResponse {
    if (this.#used) throw new TypeError('Response: body has already been read');
    let body: ReadableStream<Uint8Array> | null = null;
    if (this.#body !== null) {
      const [mine, theirs] = this.#body.tee();
      this.#body = mine;
      body = theirs;
    }
    return new HttpResponse(body, { status: this.status, statusText: this.statusText, headers: new Headers(this.headers), url: this.url });
  }
}
