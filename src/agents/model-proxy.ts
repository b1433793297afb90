import { chmod, lstat, realpath, rm } from 'node:fs/promises';
import { Agent as HttpAgent, createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';
import path from 'node:path';
import { UsageError } from '../errors.js';

// The network an agent CLI gets inside corral's sandbox: none, except its model API. The
// sandbox has an empty network namespace; corral runs this proxy outside it, on a Unix
// socket that is bound into the sandbox, and a bridge inside (model-proxy-bridge.ts) puts
// that socket on the sandbox's own loopback. The proxy is a reverse proxy to one API
// origin and adds the credential itself, so the agent inside holds a placeholder and no
// secret enters the sandbox. The shape is Anthropic's sandbox-runtime's (proxies outside,
// sockets bound in, a relay inside on loopback), narrowed from a filtering forward proxy
// to a single upstream, which is what lets the key stay outside.

/** The longest path a Unix socket can have on Linux (sun_path is 108 bytes, with its NUL). */
export const MAX_SOCKET_PATH = 107;

/** The socket's name in its folder. */
export const SOCKET_NAME = 'model-api.sock';

/** What the agent inside gets as its API key: never a secret, replaced on the way out. */
export const PLACEHOLDER_API_KEY = 'corral-placeholder-key';

/** A header the proxy sets on every request it forwards, e.g. `x-api-key: <key>`. */
export interface ModelCredential {
  /** Lower-case header name: `x-api-key` or `authorization`. */
  header: string;
  /** The whole value, e.g. the key itself or `Bearer <token>`. Never logged, never sent into the sandbox. */
  value: string;
}

export interface ModelProxyOptions {
  /**
   * The folder the socket is made in: the run's own, out of the sandbox's writable view
   * (the agent's control folder, which the sandbox shows read-only, or one bound in
   * through the sandbox's `sockets`). Its path plus `/model-api.sock` must fit in 107 bytes.
   */
  dir: string;
  /** The API base, e.g. `https://api.anthropic.com` or `https://api.openai.com/v1`: the one origin requests go to, and the path they must stay under. */
  upstream: string;
  credential: ModelCredential;
  /** Called once per request with what may be shown: never a header, a body or a query string. */
  onRequest?: (event: ModelProxyEvent) => void;
}

export interface ModelProxyEvent {
  method: string;
  /** The request's path without its query. */
  path: string;
  /** The status sent back (403 for a refused request, 502 when the upstream could not be reached). */
  status: number;
  /** Why it was refused or failed, for a person. */
  reason?: string;
}

export interface ModelProxy {
  /** The Unix socket to bind into the sandbox (at the same path) and hand to the bridge. */
  socketPath: string;
  /** The API base path (`/v1`, or `` for an origin): the agent's base URL inside is `http://127.0.0.1:<port>` + this. */
  basePath: string;
  /** The base URL the agent inside is given, for a bridge on `port`. */
  baseUrlFor(port: number): string;
  /** Stops listening, cuts open requests, removes the socket. */
  close(): Promise<void>;
}

/** Where the agent's API is and the credential for it, from corral's own environment. */
export interface ModelUpstream {
  upstream: string;
  credential: ModelCredential;
  /** The variables the agent inside gets instead: the bridge's base URL and a placeholder key. */
  agentEnv(baseUrl: string): Record<string, string>;
}

export type ModelAgent = 'claude-code' | 'codex';

/**
 * The API an agent CLI talks to and the credential corral holds for it: Claude Code's
 * Anthropic API (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY` or `ANTHROPIC_AUTH_TOKEN`), or
 * Codex's OpenAI API (`OPENAI_BASE_URL`, `OPENAI_API_KEY` or `CODEX_API_KEY`). A missing
 * credential or a base URL that is not plain http(s) is a usage error naming the variable.
 */
export function modelUpstream(agent: ModelAgent, env: NodeJS.ProcessEnv): ModelUpstream {
  if (agent === 'claude-code') {
    const upstream = checkedBase('ANTHROPIC_BASE_URL', env.ANTHROPIC_BASE_URL, 'https://api.anthropic.com');
    const key = env.ANTHROPIC_API_KEY?.trim();
    const token = env.ANTHROPIC_AUTH_TOKEN?.trim();
    const credential = key ? { header: 'x-api-key', value: key } : token ? { header: 'authorization', value: `Bearer ${token}` } : undefined;
    if (!credential) throw new UsageError('agent claude-code: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) in corral\'s environment; corral\'s model proxy adds it to the agent\'s requests, and the sandbox gets only a placeholder');
    return { upstream, credential, agentEnv: (baseUrl) => ({ ANTHROPIC_BASE_URL: baseUrl, ANTHROPIC_API_KEY: PLACEHOLDER_API_KEY }) };
  }
  const upstream = checkedBase('OPENAI_BASE_URL', env.OPENAI_BASE_URL, 'https://api.openai.com/v1');
  const key = env.OPENAI_API_KEY?.trim() || env.CODEX_API_KEY?.trim();
  if (!key) throw new UsageError('agent codex: set OPENAI_API_KEY (or CODEX_API_KEY) in corral\'s environment; corral\'s model proxy adds it to the agent\'s requests, and the sandbox gets only a placeholder');
  return {
    upstream,
    credential: { header: 'authorization', value: `Bearer ${key}` },
    agentEnv: (baseUrl) => ({ OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: PLACEHOLDER_API_KEY, CODEX_API_KEY: PLACEHOLDER_API_KEY }),
  };
}

function checkedBase(name: string, value: string | undefined, fallback: string): string {
  const base = value?.trim() || fallback;
  try {
    parseUpstream(base);
  } catch (error) {
    throw new UsageError(`${name}=${JSON.stringify(base)}: ${(error as Error).message}`);
  }
  return base;
}

interface Upstream {
  url: URL;
  /** The base path without its trailing slash: `` for an origin. */
  basePath: string;
}

function parseUpstream(base: string): Upstream {
  let url: URL;
  try {
    url = new URL(base);
  } catch {
    throw new Error('not a URL; give the API base, e.g. https://api.anthropic.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error(`the model proxy speaks http and https, not ${url.protocol}`);
  if (url.username || url.password) throw new Error('a credential in the URL would enter the sandbox; give it as the API key variable instead');
  if (url.search || url.hash) throw new Error('the API base has no query or fragment');
  return { url, basePath: url.pathname.replace(/\/+$/, '') };
}

// RFC 9110 7.6.1: meant for one connection, never forwarded; plus the proxy's own.
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
// Answered here already (node sends the 100 Continue itself), so not asked again upstream.
const ANSWERED_HERE = new Set(['expect']);
// Whatever the agent sent as its credential goes: the proxy's is the only one that leaves.
const CLIENT_CREDENTIALS = new Set(['authorization', 'x-api-key', 'api-key', 'cookie']);

/**
 * Starts the proxy on a fresh socket in `dir`. It forwards plain HTTP requests whose path
 * lies under the API base to the API origin, streamed both ways, with the credential set
 * and hop-by-hop headers dropped (a WebSocket handshake too, then its frames both ways);
 * it answers 403 to everything else (CONNECT, other upgrades,
 * another origin named in an absolute URL, a path outside the base or with dot segments).
 */
export async function startModelProxy(options: ModelProxyOptions): Promise<ModelProxy> {
  const upstream = parseUpstream(options.upstream);
  const secure = upstream.url.protocol === 'https:';
  // Real, so the path bound into the sandbox is the one the bridge connects to there.
  const socketPath = path.join(await realpath(options.dir), SOCKET_NAME);
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new UsageError(`the model proxy's socket ${socketPath} is ${Buffer.byteLength(socketPath)} bytes long and a Unix socket takes at most ${MAX_SOCKET_PATH}: give the run a shorter folder (a shorter --runs-dir or TMPDIR)`);
  }
  await removeStaleSocket(socketPath);
  const agent = secure ? new HttpsAgent({ keepAlive: true }) : new HttpAgent({ keepAlive: true });
  const note = (event: ModelProxyEvent): void => {
    try {
      options.onRequest?.(event);
    } catch {
      // An observer's failure is not the request's.
    }
  };

  const server = createServer((req, res) => forward(req, res));
  // A model's answer streams for minutes: no limit here that the agent's own client does not already keep.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  server.on('connect', (req: IncomingMessage, socket: Socket) => refuseSocket(req, socket, 'CONNECT tunnels nothing: only the model API is reachable'));
  // Codex opens the Responses API as a WebSocket first (and falls back to HTTP after
  // retries): the handshake is an HTTP request like any other, with its credential set
  // here; after it the frames pass both ways untouched.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => forwardUpgrade(req, socket, head));
  const upgraded = new Set<Socket>();
  server.on('clientError', (_error, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    else socket.destroy();
  });

  function refuseSocket(req: IncomingMessage, socket: Socket, reason: string): void {
    note({ method: req.method ?? '?', path: pathOnly(req.url ?? ''), status: 403, reason });
    const body = `corral model proxy: ${reason}\n`;
    socket.end(`HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  /**
   * The request to the upstream for one the agent made: always the configured origin
   * (whatever its Host header said), its headers without hop-by-hop ones or its own
   * credential, and corral's credential added.
   */
  function upstreamRequest(req: IncomingMessage, path: string, extra: Record<string, string>, pool: typeof agent | false) {
    const headers = { ...forwardedHeaders(req.headers), ...extra, [options.credential.header]: options.credential.value };
    return (secure ? httpsRequest : httpRequest)({
      protocol: upstream.url.protocol,
      hostname: upstream.url.hostname.replace(/^\[|\]$/g, ''),
      port: upstream.url.port || (secure ? 443 : 80),
      method: req.method ?? 'GET',
      path,
      headers,
      agent: pool,
      setHost: true,
    });
  }

  function forwardUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void {
    const target = requestTarget(req.url ?? '', upstream);
    if ('refused' in target) return refuseSocket(req, socket, target.refused);
    if (String(req.headers.upgrade ?? '').trim().toLowerCase() !== 'websocket') return refuseSocket(req, socket, 'only WebSocket upgrades are forwarded');
    const method = req.method ?? 'GET';
    const shownPath = pathOnly(target.path);
    // A connection that becomes a WebSocket never goes back to a pool.
    const outgoing = upstreamRequest(req, target.path, { connection: 'Upgrade', upgrade: 'websocket' }, false);
    upgraded.add(socket);
    socket.on('close', () => upgraded.delete(socket));
    socket.on('error', () => outgoing.destroy());
    outgoing.on('upgrade', (incoming, upstreamSocket: Socket, upstreamHead: Buffer) => {
      note({ method, path: shownPath, status: incoming.statusCode ?? 101 });
      upgraded.add(upstreamSocket);
      upstreamSocket.on('close', () => upgraded.delete(upstreamSocket));
      const lines = [`HTTP/1.1 101 ${incoming.statusMessage || 'Switching Protocols'}`, 'Connection: Upgrade', 'Upgrade: websocket'];
      const kept = responseHeaders(incoming.rawHeaders);
      for (let i = 0; i + 1 < kept.length; i += 2) lines.push(`${kept[i]}: ${kept[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (upstreamHead.length > 0) socket.write(upstreamHead);
      if (head.length > 0) upstreamSocket.write(head);
      const cut = (): void => {
        socket.destroy();
        upstreamSocket.destroy();
      };
      socket.on('error', cut);
      upstreamSocket.on('error', cut);
      socket.on('close', cut);
      upstreamSocket.on('close', cut);
      upstreamSocket.pipe(socket);
      socket.pipe(upstreamSocket);
    });
    // The upstream answered without switching: that answer goes back, and the connection ends with it.
    outgoing.on('response', (incoming) => {
      const status = incoming.statusCode ?? 502;
      note({ method, path: shownPath, status });
      const lines = [`HTTP/1.1 ${status} ${incoming.statusMessage ?? ''}`, 'Connection: close'];
      const kept = responseHeaders(incoming.rawHeaders);
      for (let i = 0; i + 1 < kept.length; i += 2) if (kept[i]!.toLowerCase() !== 'content-length') lines.push(`${kept[i]}: ${kept[i + 1]}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
      incoming.pipe(socket);
      incoming.on('error', () => socket.destroy());
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      const reason = `cannot reach ${upstream.url.origin}: ${error.code ?? error.message}`;
      note({ method, path: shownPath, status: 502, reason });
      const body = `corral model proxy: ${reason}\n`;
      if (socket.writable) socket.end(`HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
      else socket.destroy();
    });
    outgoing.end();
  }

  function refuse(req: IncomingMessage, res: ServerResponse, shownPath: string, reason: string): void {
    note({ method: req.method ?? '?', path: shownPath, status: 403, reason });
    req.resume();
    const body = `corral model proxy: ${reason}\n`;
    res.writeHead(403, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
  }

  function forward(req: IncomingMessage, res: ServerResponse): void {
    const target = requestTarget(req.url ?? '', upstream);
    if ('refused' in target) return refuse(req, res, pathOnly(req.url ?? ''), target.refused);
    const method = req.method ?? 'GET';
    const shownPath = pathOnly(target.path);
    const outgoing = upstreamRequest(req, target.path, {}, agent);
    outgoing.on('response', (incoming) => {
      const status = incoming.statusCode ?? 502;
      note({ method, path: shownPath, status });
      res.writeHead(status, incoming.statusMessage ?? '', responseHeaders(incoming.rawHeaders));
      // Each chunk as it comes: a server-sent event reaches the agent when the API sends it.
      res.flushHeaders();
      incoming.pipe(res);
      incoming.on('error', () => res.destroy());
    });
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (res.headersSent) return void res.destroy();
      const reason = `cannot reach ${upstream.url.origin}: ${error.code ?? error.message}`;
      note({ method, path: shownPath, status: 502, reason });
      const body = `corral model proxy: ${reason}\n`;
      res.writeHead(502, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
    // The agent went away mid-request or mid-stream: so does the upstream request.
    res.on('close', () => {
      if (!res.writableFinished) outgoing.destroy();
    });
    req.pipe(outgoing);
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  await chmod(socketPath, 0o600);

  let closed: Promise<void> | undefined;
  return {
    socketPath,
    basePath: upstream.basePath,
    baseUrlFor: (port) => `http://127.0.0.1:${port}${upstream.basePath}`,
    close() {
      closed ??= (async () => {
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        agent.destroy();
        await stopped;
        await rm(socketPath, { force: true });
      })();
      return closed;
    },
  };
}

/** The path and query to send upstream, or why the request is refused. */
export function requestTarget(rawUrl: string, upstream: Upstream | string): { path: string } | { refused: string } {
  const { url: base, basePath } = typeof upstream === 'string' ? parseUpstream(upstream) : upstream;
  let target = rawUrl;
  if (!target.startsWith('/')) {
    // Absolute form, as a client sends it to a forward proxy: only the API's own origin,
    // or the bridge's loopback address the agent was given, and then only its path counts.
    let named: URL;
    try {
      named = new URL(target);
    } catch {
      return { refused: `${JSON.stringify(target.slice(0, 200))} is not a request path` };
    }
    const loopback = named.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]'].includes(named.hostname);
    if (!loopback && named.origin !== base.origin) return { refused: `only ${base.origin} is reachable, not ${named.origin}` };
    target = `${named.pathname}${named.search}`;
  }
  const query = target.indexOf('?');
  const pathPart = query === -1 ? target : target.slice(0, query);
  // Checked as the upstream might read it: a dot segment, an encoded slash or dot, or a
  // backslash could climb out of the API base there even when it looks inside it here.
  if (/\\|%2f|%5c|%2e/i.test(pathPart) || pathPart.split('/').some((segment) => segment === '.' || segment === '..')) {
    return { refused: `${JSON.stringify(pathPart.slice(0, 200))} is not a plain path` };
  }
  if (/[\u0000-\u0020\u007f]/.test(target)) return { refused: 'the request target holds a control character or a space' };
  if (basePath !== '' && pathPart !== basePath && !pathPart.startsWith(`${basePath}/`)) {
    return { refused: `${JSON.stringify(pathPart.slice(0, 200))} is outside the API base ${basePath}` };
  }
  return { path: target };
}

function forwardedHeaders(incoming: IncomingMessage['headers']): OutgoingHttpHeaders {
  const named = new Set(
    String(incoming.connection ?? '')
      .split(',')
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (value === undefined || name === 'host' || HOP_BY_HOP.has(name) || ANSWERED_HERE.has(name) || named.has(name) || CLIENT_CREDENTIALS.has(name)) continue;
    headers[name] = value;
  }
  return headers;
}

function responseHeaders(raw: string[]): string[] {
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
  const named = new Set(
    pairs
      .filter(([name]) => name.toLowerCase() === 'connection')
      .flatMap(([, value]) => value.split(','))
      .map((token) => token.trim().toLowerCase())
      .filter(Boolean),
  );
  return pairs.filter(([name]) => !HOP_BY_HOP.has(name.toLowerCase()) && !named.has(name.toLowerCase())).flat();
}

/** A request's path for a log line: no query (it may hold anything). */
function pathOnly(target: string): string {
  const end = target.search(/[?#]/);
  return (end === -1 ? target : target.slice(0, end)).slice(0, 200);
}

/** A socket a killed run left at this path goes (nothing listens on it); anything else there is not the proxy's to remove. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  try {
    if (!(await lstat(socketPath)).isSocket()) throw new UsageError(`the model proxy's socket path ${socketPath} is taken by something that is not a socket`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  await rm(socketPath, { force: true });
}
