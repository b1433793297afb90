import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { proxiedModelAccess } from '../../src/agents/model-proxy-access.js';
import { modelUpstream, PLACEHOLDER_API_KEY, requestTarget, startModelProxy, type ModelProxy, type ModelProxyEvent } from '../../src/agents/model-proxy.js';
import { UsageError } from '../../src/errors.js';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { createSandbox } from '../../src/guard/sandbox/sandbox.js';
import { startMessagesServer, type MessagesServer } from '../support/messages-server.js';
import { tempDir } from '../support/repo.js';

// The model proxy: outside the sandbox on a Unix socket, one upstream origin, the key
// added on the way out; and the bridge inside a real bubblewrap sandbox with no network.

const REAL_KEY = 'sk-ant-test-upstream-key-0123456789abcdefghij';

/** One request over the proxy's socket, as a client inside would send it through the bridge. */
function viaSocket(socketPath: string, options: { method?: string; path: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method: options.method ?? 'POST', path: options.path, headers: options.headers ?? {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

const messageBody = JSON.stringify({ model: 'claude-test', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] });

describe('requestTarget', () => {
  it('keeps a path under the API base and refuses what climbs out of it or names another origin', () => {
    const openai = 'https://api.openai.com/v1';
    expect(requestTarget('/v1/responses?stream=true', openai)).toEqual({ path: '/v1/responses?stream=true' });
    expect(requestTarget('/v1', openai)).toEqual({ path: '/v1' });
    expect(requestTarget('/v2/responses', openai)).toHaveProperty('refused');
    expect(requestTarget('/v1x/responses', openai)).toHaveProperty('refused');
    expect(requestTarget('/v1/../admin', openai)).toHaveProperty('refused');
    expect(requestTarget('/v1/%2e%2e/admin', openai)).toHaveProperty('refused');
    expect(requestTarget('/v1/a%2Fb', openai)).toHaveProperty('refused');
    expect(requestTarget('/v1\\..\\x', openai)).toHaveProperty('refused');
    expect(requestTarget('http://evil.example/v1/responses', openai)).toMatchObject({ refused: expect.stringContaining('evil.example') });
    expect(requestTarget('https://api.openai.com.evil.example/v1/x', openai)).toHaveProperty('refused');
    expect(requestTarget('evil.example:443', openai)).toHaveProperty('refused');
    expect(requestTarget('*', openai)).toHaveProperty('refused');
    // The API's own origin, or the bridge's loopback address: only the path counts.
    expect(requestTarget('https://api.openai.com/v1/responses', openai)).toEqual({ path: '/v1/responses' });
    expect(requestTarget('http://127.0.0.1:47800/v1/responses', openai)).toEqual({ path: '/v1/responses' });
    // An origin as the base: any plain path on it.
    expect(requestTarget('/v1/messages?beta=true', 'https://api.anthropic.com')).toEqual({ path: '/v1/messages?beta=true' });
  });
});

describe('modelUpstream', () => {
  it('takes the API and credential from corral\'s environment, and gives the agent a placeholder', () => {
    const claude = modelUpstream('claude-code', { ANTHROPIC_API_KEY: REAL_KEY });
    expect(claude.upstream).toBe('https://api.anthropic.com');
    expect(claude.credential).toEqual({ header: 'x-api-key', value: REAL_KEY });
    expect(claude.agentEnv('http://127.0.0.1:5')).toEqual({ ANTHROPIC_BASE_URL: 'http://127.0.0.1:5', ANTHROPIC_API_KEY: PLACEHOLDER_API_KEY });
    expect(modelUpstream('claude-code', { ANTHROPIC_AUTH_TOKEN: 'tok', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' }).credential).toEqual({ header: 'authorization', value: 'Bearer tok' });
    const codex = modelUpstream('codex', { OPENAI_API_KEY: 'sk-openai' });
    expect(codex.upstream).toBe('https://api.openai.com/v1');
    expect(codex.credential).toEqual({ header: 'authorization', value: 'Bearer sk-openai' });
    expect(JSON.stringify(codex.agentEnv('http://127.0.0.1:5/v1'))).not.toContain('sk-openai');
  });

  it('refuses a missing key or a base URL that is not plain http(s), naming the variable', () => {
    expect(() => modelUpstream('claude-code', {})).toThrow(UsageError);
    expect(() => modelUpstream('claude-code', {})).toThrow(/ANTHROPIC_API_KEY/);
    expect(() => modelUpstream('codex', { OPENAI_API_KEY: ' ' })).toThrow(/OPENAI_API_KEY/);
    expect(() => modelUpstream('claude-code', { ANTHROPIC_API_KEY: 'k', ANTHROPIC_BASE_URL: 'ftp://x' })).toThrow(/ANTHROPIC_BASE_URL=.*ftp:/);
    expect(() => modelUpstream('codex', { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'https://user:pw@api.example/v1' })).toThrow(/credential in the URL/);
  });
});

describe('the model proxy', () => {
  let api: MessagesServer;
  let proxy: ModelProxy;
  const events: ModelProxyEvent[] = [];

  beforeAll(async () => {
    api = await startMessagesServer(Array.from({ length: 10 }, () => ({ content: [{ type: 'text' as const, text: 'hello' }] })));
    proxy = await startModelProxy({ dir: tempDir('corral-mp-'), upstream: api.url, credential: { header: 'x-api-key', value: REAL_KEY }, onRequest: (event) => events.push(event) });
  });
  afterAll(async () => {
    await proxy?.close();
    await api?.close();
  });

  it('forwards an API request with the real key in place of the placeholder, and no hop-by-hop header', async () => {
    const before = api.requests.length;
    const reply = await viaSocket(proxy.socketPath, {
      path: '/v1/messages',
      headers: { 'content-type': 'application/json', 'x-api-key': PLACEHOLDER_API_KEY, authorization: 'Bearer placeholder', 'proxy-authorization': 'x', 'x-drop-me': '1', connection: 'x-drop-me', 'anthropic-version': '2023-06-01' },
      body: messageBody,
    });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toMatchObject({ content: [{ type: 'text', text: 'hello' }] });
    const seen = api.requests[before]!.headers;
    expect(seen['x-api-key']).toBe(REAL_KEY);
    expect(seen.authorization).toBeUndefined();
    expect(seen['proxy-authorization']).toBeUndefined();
    expect(seen['x-drop-me']).toBeUndefined();
    expect(seen['anthropic-version']).toBe('2023-06-01');
  });

  it('goes to the configured origin whatever the Host header or an absolute URL says', async () => {
    const before = api.requests.length;
    const hosted = await viaSocket(proxy.socketPath, { path: '/v1/messages', headers: { host: 'evil.example', 'content-type': 'application/json' }, body: messageBody });
    expect(hosted.status).toBe(200);
    expect(api.requests[before]!.headers.host).toBe(new URL(api.url).host);
    const absolute = await viaSocket(proxy.socketPath, { path: 'http://evil.example/v1/messages', headers: { 'content-type': 'application/json' }, body: messageBody });
    expect(absolute.status).toBe(403);
    expect(absolute.body).toMatch(/only http:\/\/127\.0\.0\.1:\d+ is reachable/);
    expect(api.requests.length).toBe(before + 1);
  });

  it('refuses CONNECT, upgrades other than WebSocket, and paths that climb out, with 403', async () => {
    const connect = await new Promise<number>((resolve, reject) => {
      const req = request({ socketPath: proxy.socketPath, method: 'CONNECT', path: 'github.com:443' });
      req.on('connect', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('error', reject);
      req.end();
    });
    expect(connect).toBe(403);
    const upgrade = await new Promise<number>((resolve, reject) => {
      const req = request({ socketPath: proxy.socketPath, path: '/v1/messages', headers: { connection: 'upgrade', upgrade: 'h2c' } });
      req.on('response', (res) => resolve(res.statusCode ?? 0));
      req.on('upgrade', (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(upgrade).toBe(403);
    expect((await viaSocket(proxy.socketPath, { path: '/v1/../../etc/passwd' })).status).toBe(403);
  });

  it('forwards a WebSocket handshake with the real key, then its frames both ways; another origin is refused', async () => {
    const handshakes: IncomingMessage['headers'][] = [];
    const ws: Server = createServer((_req, res) => res.writeHead(404).end());
    ws.on('upgrade', (req: IncomingMessage, socket: Socket) => {
      handshakes.push(req.headers);
      socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: test-accept\r\n\r\n');
      // An echo with a prefix, standing in for frames.
      socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk.toString()}`));
      socket.on('end', () => socket.end());
      socket.on('error', () => socket.destroy());
    });
    await new Promise<void>((resolve) => ws.listen(0, '127.0.0.1', resolve));
    const wsProxy = await startModelProxy({ dir: tempDir('corral-mp-'), upstream: `http://127.0.0.1:${(ws.address() as AddressInfo).port}/v1`, credential: { header: 'authorization', value: 'Bearer sk-real-ws' } });
    /** A raw handshake over the proxy's socket; what comes back after it is written `frame`. */
    const exchange = (target: string, frame: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const client = connect(wsProxy.socketPath);
        let got = '';
        client.on('data', (chunk: Buffer) => {
          got += chunk.toString();
          if (got.includes('\r\n\r\n') && got.startsWith('HTTP/1.1 101') && !got.includes('echo:')) client.write(frame);
          if (got.includes(`echo:${frame}`) || (!got.startsWith('HTTP/1.1 101') && got.includes('\r\n\r\n'))) {
            client.destroy();
            resolve(got);
          }
        });
        client.on('error', reject);
        client.write(`GET ${target} HTTP/1.1\r\nHost: evil.example\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${PLACEHOLDER_API_KEY}\r\n\r\n`);
      });
    try {
      const answer = await exchange('/v1/responses', 'frame-1');
      expect(answer).toMatch(/^HTTP\/1\.1 101 /);
      expect(answer).toMatch(/sec-websocket-accept: test-accept/i);
      expect(answer).toContain('echo:frame-1');
      expect(handshakes).toHaveLength(1);
      expect(handshakes[0]).toMatchObject({ authorization: 'Bearer sk-real-ws', upgrade: 'websocket', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', host: `127.0.0.1:${(ws.address() as AddressInfo).port}` });
      expect(await exchange('ws://evil.example/v1/responses', 'x')).toMatch(/^HTTP\/1\.1 403 /);
      expect(await exchange('/v2/responses', 'x')).toMatch(/^HTTP\/1\.1 403 /);
      expect(handshakes).toHaveLength(1);
    } finally {
      await wsProxy.close();
      await new Promise<void>((resolve) => ws.close(() => resolve()));
    }
  });

  it('says 502 when the upstream cannot be reached, and never shows the key in what it reports', async () => {
    const closed = await startMessagesServer([]);
    const url = closed.url;
    await closed.close();
    const seen: ModelProxyEvent[] = [];
    const dead = await startModelProxy({ dir: tempDir('corral-mp-'), upstream: url, credential: { header: 'x-api-key', value: REAL_KEY }, onRequest: (event) => seen.push(event) });
    try {
      const reply = await viaSocket(dead.socketPath, { path: '/v1/messages?key=query-secret', body: messageBody });
      expect(reply.status).toBe(502);
      expect(reply.body).toMatch(/cannot reach http:\/\/127\.0\.0\.1:\d+/);
      expect(seen).toEqual([expect.objectContaining({ status: 502, path: '/v1/messages' })]);
    } finally {
      await dead.close();
    }
    const reported = JSON.stringify(events) + JSON.stringify(seen);
    expect(reported).not.toContain(REAL_KEY);
    expect(reported).not.toContain('query-secret');
    // Its folder holds the socket and nothing else, and nothing once it is closed.
    expect(readdirSync(path.dirname(proxy.socketPath))).toEqual(['model-api.sock']);
    expect(readdirSync(path.dirname(dead.socketPath))).toEqual([]);
  });

  it('streams server-sent events as they come: the first arrives while the upstream still holds the stream open', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const sse: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: first\ndata: {"n":1}\n\n');
      void released.then(() => res.end('event: last\ndata: {"n":2}\n\n'));
    });
    await new Promise<void>((resolve) => sse.listen(0, '127.0.0.1', resolve));
    const streaming = await startModelProxy({ dir: tempDir('corral-mp-'), upstream: `http://127.0.0.1:${(sse.address() as AddressInfo).port}`, credential: { header: 'x-api-key', value: REAL_KEY } });
    try {
      const chunks = await new Promise<string[]>((resolve, reject) => {
        const got: string[] = [];
        const req = request({ socketPath: streaming.socketPath, method: 'POST', path: '/v1/messages' }, (res) => {
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            got.push(chunk);
            // Only once the first event is here does the upstream finish: buffering would hang.
            if (got.length === 1) release();
          });
          res.on('end', () => resolve(got));
        });
        req.on('error', reject);
        req.end(messageBody);
      });
      expect(chunks[0]).toContain('event: first');
      expect(chunks.join('')).toContain('event: last');
    } finally {
      await streaming.close();
      await new Promise<void>((resolve) => sse.close(() => resolve()));
    }
  });

  it('serves Codex\'s API under its base path with a bearer token, and nothing beside it on that origin', async () => {
    const seenHere: { url: string | undefined; authorization: string | undefined }[] = [];
    const openai: Server = createServer((req, res) => {
      seenHere.push({ url: req.url, authorization: req.headers.authorization });
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json', connection: 'x-upstream-hop', 'x-upstream-hop': '1', 'x-request-id': 'r1' });
      res.end('{"id":"resp_1"}');
    });
    await new Promise<void>((resolve) => openai.listen(0, '127.0.0.1', resolve));
    const model = modelUpstream('codex', { OPENAI_API_KEY: 'sk-openai-real', OPENAI_BASE_URL: `http://127.0.0.1:${(openai.address() as AddressInfo).port}/v1` });
    const codex = await startModelProxy({ dir: tempDir('corral-mp-'), upstream: model.upstream, credential: model.credential });
    try {
      expect(codex.baseUrlFor(47_800)).toBe('http://127.0.0.1:47800/v1');
      const ok = await viaSocket(codex.socketPath, { path: '/v1/responses', headers: { authorization: `Bearer ${PLACEHOLDER_API_KEY}`, 'content-type': 'application/json', expect: '100-continue' }, body: '{"model":"gpt"}' });
      expect(ok.status).toBe(200);
      expect(ok.headers['x-upstream-hop']).toBeUndefined();
      expect(ok.headers['x-request-id']).toBe('r1');
      expect(seenHere).toEqual([{ url: '/v1/responses', authorization: 'Bearer sk-openai-real' }]);
      expect((await viaSocket(codex.socketPath, { path: '/v2/admin' })).status).toBe(403);
      expect((await viaSocket(codex.socketPath, { path: '/' })).status).toBe(403);
      expect(seenHere).toHaveLength(1);
    } finally {
      await codex.close();
      await new Promise<void>((resolve) => openai.close(() => resolve()));
    }
  });

  it('refuses a socket path longer than a Unix socket takes, or one a file holds, and leaves things as they were', async () => {
    const deep = tempDir(`corral-mp-${'x'.repeat(120)}-`);
    await expect(startModelProxy({ dir: deep, upstream: 'http://127.0.0.1:9', credential: { header: 'x-api-key', value: 'k' } })).rejects.toThrow(/at most 107/);
    expect(readdirSync(deep)).toEqual([]);
    const taken = tempDir('corral-mp-');
    writeFileSync(path.join(taken, 'model-api.sock'), 'mine');
    await expect(startModelProxy({ dir: taken, upstream: 'http://127.0.0.1:9', credential: { header: 'x-api-key', value: 'k' } })).rejects.toThrow(/taken by something that is not a socket/);
    expect(readFileSync(path.join(taken, 'model-api.sock'), 'utf8')).toBe('mine');
  });
});

const probe = await probeBubblewrap();
if (!probe.ok) process.stderr.write(`model proxy sandbox tests skipped: ${probe.reason}\n`);

/** Runs `node -e script` inside a real sandbox with no network, under the bridge; stdout, stderr and the exit code. */
function runInSandbox(argv: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A folder outside /tmp (the sandbox's /tmp is its own), for the sandbox to show read-only. */
function visibleFolder(): string {
  const dir = path.join('/var/tmp', `corral-mp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(dir, { mode: 0o700 });
  visibleFolders.push(dir);
  return dir;
}
const visibleFolders: string[] = [];
afterAll(() => {
  for (const dir of visibleFolders) rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!probe.ok)('the bridge inside a sandbox with no network', () => {
  let api: Server;
  let apiPort: number;
  const seen: IncomingMessage['headers'][] = [];
  let close: () => Promise<void> = async () => undefined;
  let release: () => void = () => {};
  const proxyEvents: ModelProxyEvent[] = [];

  beforeAll(async () => {
    // A stand-in API: /v1/messages answers JSON, /v1/stream sends one event and holds the
    // stream until /v1/release comes in (through the same proxy, from inside).
    let released = new Promise<void>((resolve) => (release = resolve));
    api = createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      if (req.url === '/v1/stream') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('event: first\ndata: 1\n\n');
        void released.then(() => res.end('event: last\ndata: 2\n\n'));
        return;
      }
      if (req.url === '/v1/release') {
        release();
        released = new Promise<void>((resolve) => (release = resolve));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, path: req.url }));
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    apiPort = (api.address() as AddressInfo).port;
  });
  afterEach(async () => {
    await close();
  });
  afterAll(() => new Promise<void>((resolve) => api.close(() => resolve())));

  /**
   * Runs `script` under the bridge in a real sandbox with no network, the way a runner
   * does: the proxy's socket shown either through the sandbox's `sockets`, or in a folder
   * the sandbox shows read-only (as the agent's control folder is).
   */
  async function sandboxed(script: string, port: number, show: 'sockets' | 'folder' = 'sockets'): Promise<{ code: number | null; stdout: string; stderr: string; env: Record<string, string> }> {
    const tmp = tempDir('corral-mp-tmp-');
    const worktree = tempDir('corral-mp-wt-');
    const dir = show === 'sockets' ? tmp : visibleFolder();
    const access = await proxiedModelAccess('claude-code', { ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: `http://127.0.0.1:${apiPort}` }, { dir, port, onRequest: (event) => proxyEvents.push(event) });
    close = access.close;
    expect(access.needsNetwork).toBe(false);
    const sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, ...(show === 'sockets' ? { sockets: [access.socketPath] } : { readPaths: [dir] }) });
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, TMPDIR: tmp, ...access.env };
    const argv = sandbox.wrap(access.command([process.execPath, '-e', `(async () => {${script}})().catch((error) => { console.error(error); process.exit(1); });`]), worktree);
    // Shown at its own path, read-only: connectable, not replaceable.
    if (show === 'sockets') expect(argv.join(' ')).toContain(`--ro-bind ${access.socketPath} ${access.socketPath}`);
    return { ...(await runInSandbox(argv, env)), env };
  }

  it('reaches the API through the bridge with the real key added, and nothing else at all', async () => {
    const script = `
      const report = {};
      const base = process.env.ANTHROPIC_BASE_URL;
      const api = await fetch(base + '/v1/messages', { method: 'POST', headers: { 'x-api-key': process.env.ANTHROPIC_API_KEY, 'content-type': 'application/json' }, body: '{}' });
      report.api = { status: api.status, body: await api.json() };
      const absolute = await new Promise((resolve) => {
        const req = require('node:http').request({ host: '127.0.0.1', port: Number(new URL(base).port), path: 'http://198.51.100.7/x' }, (res) => { res.resume(); resolve(res.statusCode); });
        req.on('error', (e) => resolve(e.code));
        req.end();
      });
      report.absolute = absolute;
      const attempt = (url) => fetch(url).then((r) => 'reached ' + r.status, (e) => String(e.cause?.code ?? e.message));
      report.directApi = await attempt('http://127.0.0.1:${apiPort}/v1/messages');
      report.elsewhere = await attempt('http://192.0.2.1:80/');
      report.env = process.env;
      console.log(JSON.stringify(report));
    `;
    const before = seen.length;
    const { code, stdout, stderr, env } = await sandboxed(script, 47_801);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { api: { status: number; body: unknown }; absolute: unknown; directApi: string; elsewhere: string; env: Record<string, string> };
    expect(report.api).toEqual({ status: 200, body: { ok: true, path: '/v1/messages' } });
    expect(seen[before]!['x-api-key']).toBe(REAL_KEY);
    expect(seen.length).toBe(before + 1);
    // Another origin through the bridge is refused; everything else has no route at all.
    expect(report.absolute).toBe(403);
    expect(report.directApi).toMatch(/ECONNREFUSED/);
    expect(report.elsewhere).toMatch(/ENETUNREACH|EHOSTUNREACH|ECONNREFUSED/);
    expect(report.env.ANTHROPIC_API_KEY).toBe(PLACEHOLDER_API_KEY);
    expect(report.env.ANTHROPIC_BASE_URL).toBe('http://127.0.0.1:47801');
    expect(stdout).not.toContain(REAL_KEY);
    expect(JSON.stringify(env)).not.toContain(REAL_KEY);
    expect(JSON.stringify(proxyEvents)).not.toContain(REAL_KEY);
  });

  it('passes a server-sent event stream through unbuffered', async () => {
    const script = `
      const base = process.env.ANTHROPIC_BASE_URL;
      const res = await fetch(base + '/v1/stream', { method: 'POST', body: '{}' });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      const first = decoder.decode((await reader.read()).value);
      // The upstream ends the stream only after this request: a buffered stream never gets here.
      await fetch(base + '/v1/release', { method: 'POST', body: '{}' });
      let rest = '';
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += decoder.decode(chunk.value);
      console.log(JSON.stringify({ first, rest }));
    `;
    const { code, stdout, stderr } = await sandboxed(script, 47_802);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const { first, rest } = JSON.parse(stdout) as { first: string; rest: string };
    expect(first).toContain('event: first');
    expect(first).not.toContain('event: last');
    expect(rest).toContain('event: last');
  });

  it('reaches the API through a socket in a folder the sandbox shows read-only', async () => {
    const { code, stdout, stderr } = await sandboxed(`
      const res = await fetch(process.env.ANTHROPIC_BASE_URL + '/v1/messages', { method: 'POST', body: '{}' });
      console.log(res.status);
    `, 47_804, 'folder');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout.trim()).toBe('200');
  });

  it('exits as the command under it does', async () => {
    const { code } = await sandboxed('process.exit(7)', 47_803);
    expect(code).toBe(7);
  });
});

// The real Claude Code CLI, when the environment names one (a path outside /tmp, which the
// sandbox replaces with its own): `npm install @anthropic-ai/claude-code` somewhere, then
// CORRAL_TEST_CLAUDE_CODE=<that>/node_modules/.bin/claude.
const realClaude = process.env.CORRAL_TEST_CLAUDE_CODE;
if (probe.ok && !realClaude) process.stderr.write('real Claude Code through the model proxy: skipped (set CORRAL_TEST_CLAUDE_CODE to a claude executable outside /tmp)\n');

describe.skipIf(!probe.ok || !realClaude)('the real Claude Code in a sandbox with no network', () => {
  it('answers from the Messages API stand-in through the proxy, holding only the placeholder key', async () => {
    const api = await startMessagesServer(Array.from({ length: 4 }, () => ({ content: [{ type: 'text' as const, text: 'hello from the stand-in' }] })));
    const tmp = tempDir('corral-mp-claude-');
    const worktree = tempDir('corral-mp-claude-wt-');
    const access = await proxiedModelAccess('claude-code', { ANTHROPIC_API_KEY: REAL_KEY, ANTHROPIC_BASE_URL: api.url }, { dir: tmp });
    try {
      const sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, sockets: [access.socketPath] });
      const argv = sandbox.wrap(access.command([realClaude!, '-p', 'say hello', '--output-format', 'json', '--model', 'claude-sonnet-4-5']), worktree);
      const { code, stdout } = await runInSandbox(argv, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, TMPDIR: tmp, ...access.env });
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ is_error: false, result: 'hello from the stand-in' });
      expect(api.requests.length).toBeGreaterThan(0);
      expect(api.requests.every((request) => request.headers['x-api-key'] === REAL_KEY)).toBe(true);
      expect(stdout).not.toContain(REAL_KEY);
    } finally {
      await access.close();
      await api.close();
    }
  }, 120_000);
});

// The real Codex CLI likewise (CORRAL_TEST_CODEX=<dir>/node_modules/.bin/codex, outside /tmp),
// against a small Responses API stand-in: it refuses Codex's WebSocket (426), so Codex
// falls back to HTTP and its server-sent events.
const realCodex = process.env.CORRAL_TEST_CODEX;
if (probe.ok && !realCodex) process.stderr.write('real Codex through the model proxy: skipped (set CORRAL_TEST_CODEX to a codex executable outside /tmp)\n');

describe.skipIf(!probe.ok || !realCodex)('the real Codex in a sandbox with no network', () => {
  it('answers from the Responses API stand-in through the proxy, holding only the placeholder key', async () => {
    const requests: { method: string | undefined; url: string | undefined; authorization: string | undefined }[] = [];
    const api: Server = createServer((req, res) => {
      requests.push({ method: req.method, url: req.url, authorization: req.headers.authorization });
      req.resume();
      if (req.method !== 'POST' || req.url !== '/v1/responses') return void res.writeHead(426).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (event: { type: string; [field: string]: unknown }): boolean => res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
      send({ type: 'response.created', response: { id: 'resp_1' } });
      send({ type: 'response.output_item.done', item: { type: 'message', role: 'assistant', id: 'msg_1', content: [{ type: 'output_text', text: 'hello from the stand-in' }] } });
      send({ type: 'response.completed', response: { id: 'resp_1', usage: { input_tokens: 5, input_tokens_details: null, output_tokens: 3, output_tokens_details: null, total_tokens: 8 } } });
      res.end();
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    const tmp = tempDir('corral-mp-codex-');
    const worktree = tempDir('corral-mp-codex-wt-');
    const access = await proxiedModelAccess('codex', { OPENAI_API_KEY: REAL_KEY, OPENAI_BASE_URL: `http://127.0.0.1:${(api.address() as AddressInfo).port}/v1` }, { dir: tmp });
    try {
      const sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, sockets: [access.socketPath] });
      const argv = sandbox.wrap(access.command([realCodex!, 'exec', '--json', '--skip-git-repo-check', '-c', `openai_base_url=${JSON.stringify(access.baseUrl)}`, 'say hello']), worktree);
      const { code, stdout } = await runInSandbox(argv, { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, TMPDIR: tmp, CODEX_HOME: tmp, ...access.env });
      expect(code).toBe(0);
      expect(stdout).toContain('"text":"hello from the stand-in"');
      expect(requests.some((request) => request.method === 'POST')).toBe(true);
      expect(requests.every((request) => request.authorization === `Bearer ${REAL_KEY}`)).toBe(true);
      expect(stdout).not.toContain(REAL_KEY);
    } finally {
      await access.close();
      await new Promise<void>((resolve) => api.close(() => resolve()));
    }
  }, 120_000);
});
