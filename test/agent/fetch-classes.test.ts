// corral's Headers must answer as Node's own (the fetch standard's) do, since the SDK
// uses them in Node's place; each case runs the same operations on both and compares.
import { describe, expect, it } from 'vitest';
import { FormData as LazyFormData, Headers, HttpResponse } from '../../src/agent/fetch-classes.js';

type AnyHeaders = InstanceType<typeof globalThis.Headers> | Headers;
type Operation = (headers: AnyHeaders) => unknown;

/** What `operations` leave and return, on a fresh Headers of each kind made from `init`. */
function both(init: unknown, operations: readonly Operation[]): { node: unknown; ours: unknown } {
  const run = (make: (init: never) => AnyHeaders) => {
    try {
      const headers = make(init as never);
      const results = operations.map((operation) => {
        try {
          return operation(headers);
        } catch (error) {
          return `threw ${(error as Error).name}`;
        }
      });
      return { results, entries: [...headers.entries()], setCookie: headers.getSetCookie() };
    } catch (error) {
      return `threw ${(error as Error).name}`;
    }
  };
  return { node: run((i) => new globalThis.Headers(i)), ours: run((i) => new Headers(i)) };
}

describe("corral's Headers, against Node's", () => {
  const cases: [string, unknown, Operation[]][] = [
    ['empty', undefined, [(h) => h.get('a'), (h) => h.has('a')]],
    ['from a record, names in any case', { 'Content-Type': 'application/json', 'X-Api-Key': 'k' }, [(h) => h.get('content-type'), (h) => h.get('X-API-KEY')]],
    ['from pairs, a name repeated', [['Accept', 'a'], ['accept', 'b'], ['X-One', ' padded\t']], [(h) => h.get('accept'), (h) => h.get('x-one')]],
    ['from another Headers', new globalThis.Headers({ b: '2', a: '1' }), [(h) => [...h.keys()]]],
    ['set replaces, append adds, delete removes', { a: '1' }, [(h) => h.append('a', '2'), (h) => h.get('a'), (h) => h.set('A', '3'), (h) => h.get('a'), (h) => h.delete('a'), (h) => h.has('a')]],
    ['entries sorted by name', { zeta: '1', Alpha: '2', mid: '3' }, [(h) => [...h.values()]]],
    ['set-cookie listed one by one', [['Set-Cookie', 'a=1'], ['set-cookie', 'b=2'], ['x', 'y']], [(h) => h.get('set-cookie')]],
    ['forEach sees value then name', { b: '2', a: '1' }, [(h) => { const seen: string[] = []; h.forEach((value, name) => seen.push(`${name}=${value}`)); return seen; }]],
    ['an invalid name', undefined, [(h) => h.append('bad name', 'x'), (h) => h.set('', 'x'), (h) => h.get('a:b')]],
    ['a value with a line break or NUL', undefined, [(h) => h.append('a', 'x\r\ny: z'), (h) => h.set('b', 'x\0')]],
    ['a value outside latin-1', undefined, [(h) => h.set('a', 'caf\u00e9'), (h) => h.set('b', 'snow \u2603')]],
    ['a pair that is not a pair', [['only-name']], []],
    ['a header deleted while iterating', { a: '1', b: '2', c: '3' }, [(h) => { const seen: string[] = []; h.forEach((_value, name) => (seen.push(name), h.delete('b'))); return seen; }]],
  ];
  it.each(cases)('%s', (_name, init, operations) => {
    const { node, ours } = both(init, operations);
    expect(ours).toEqual(node);
  });

  it("counts Node's Headers and its own as Headers, and nothing else", () => {
    expect(new globalThis.Headers() instanceof Headers).toBe(true);
    expect(new Headers() instanceof Headers).toBe(true);
    expect(Object.prototype.toString.call(new Headers())).toBe('[object Headers]');
    expect({ get: () => null } instanceof Headers).toBe(false);
    expect([['a', 'b']] instanceof Headers).toBe(false);
  });
});

describe('FormData, loaded when made', () => {
  it("makes Node's own, and answers instanceof without making one", () => {
    const form = new LazyFormData() as unknown as InstanceType<typeof globalThis.FormData>;
    form.append('a', '1');
    expect(form).toBeInstanceOf(globalThis.FormData);
    expect(form instanceof LazyFormData).toBe(true);
    expect(new globalThis.FormData() instanceof LazyFormData).toBe(true);
    expect({ a: 1 } instanceof LazyFormData).toBe(false);
    expect(('text' as unknown) instanceof LazyFormData).toBe(false);
  });
});

describe('HttpResponse', () => {
  const stream = (...parts: string[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(Buffer.from(part));
        controller.close();
      },
    });

  it('reads its body whole, as text or JSON, once', async () => {
    const response = new HttpResponse(stream('{"a":', ' "caf\u00e9"}'), { status: 200, headers: new Headers({ 'content-type': 'application/json' }) });
    expect(response.ok).toBe(true);
    expect(response.bodyUsed).toBe(false);
    expect(await response.json()).toEqual({ a: 'caf\u00e9' });
    expect(response.bodyUsed).toBe(true);
    await expect(response.text()).rejects.toThrow(TypeError);
  });

  it('gives a clone its own copy of the body', async () => {
    const response = new HttpResponse(stream('one ', 'two'), { status: 529, statusText: 'Overloaded', headers: new Headers() });
    const copy = response.clone();
    expect(await copy.text()).toBe('one two');
    expect(await response.text()).toBe('one two');
    expect(response.ok).toBe(false);
    expect(copy.status).toBe(529);
    expect(copy.statusText).toBe('Overloaded');
  });

  it('reads an empty body as nothing, and as bytes and blobs', async () => {
    expect(await new HttpResponse(null, { status: 204, headers: new Headers() }).text()).toBe('');
    const blob = await new HttpResponse(stream('abc'), { status: 200, headers: new Headers({ 'content-type': 'text/plain' }) }).blob();
    expect(blob.type).toBe('text/plain');
    expect(await blob.text()).toBe('abc');
    const bytes = await new HttpResponse(stream('xy'), { status: 200, headers: new Headers() }).arrayBuffer();
    expect(Buffer.from(bytes).toString()).toBe('xy');
    // Bytes in a buffer of their own, holding the body and nothing else (not a slice of a shared pool).
    const own = await new HttpResponse(stream('abc'), { status: 200, headers: new Headers() }).bytes();
    expect(own.buffer.byteLength).toBe(3);
  });

  it('refuses a status a Response cannot have, as Node does', () => {
    for (const status of [101, 199, 600]) {
      expect(() => new HttpResponse(null, { status, headers: new Headers() })).toThrow(RangeError);
      expect(() => new Response(null, { status })).toThrow(RangeError);
    }
  });
});
