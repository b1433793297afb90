import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { isGuardRequest, isHookAnswer, type GuardRequest, type HookAnswer } from './hook-protocol.js';

// The line between an agent's hook and the running corral: a unix socket in the run's
// control folder. One connection is one call: the hook writes its request and ends its
// side; corral answers with one JSON object and closes. Anything else is a deny.

/** Requests larger than this are not calls (a Write of a whole file fits many times over). */
const MAX_REQUEST_BYTES = 64 * 1024 * 1024;

export interface GuardServer {
  readonly path: string;
  close(): Promise<void>;
}

/** Serves `decide` on a unix socket at `socketPath`; a request it cannot read, or a decide that throws, is answered deny. */
export async function serveGuard(socketPath: string, decide: (request: GuardRequest) => Promise<HookAnswer>): Promise<GuardServer> {
  const sockets = new Set<Socket>();
  // Half-open: the hook ends its side once its request is sent, and the answer still goes back.
  const server: Server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const chunks: Buffer[] = [];
    let size = 0;
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) {
        answer(socket, { effect: 'deny', reason: 'corral: the call is too large to judge' });
        return;
      }
      chunks.push(chunk);
    });
    socket.on('end', () => {
      if (size > MAX_REQUEST_BYTES) return;
      let request: unknown;
      try {
        request = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        answer(socket, { effect: 'deny', reason: 'corral: the hook sent a request that is not JSON' });
        return;
      }
      if (!isGuardRequest(request)) {
        answer(socket, { effect: 'deny', reason: 'corral: the hook sent a request corral does not understand' });
        return;
      }
      decide(request).then(
        (decided) => answer(socket, decided),
        (error: unknown) => answer(socket, { effect: 'deny', reason: `corral could not judge the call: ${error instanceof Error ? error.message : String(error)}` }),
      );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    path: socketPath,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function answer(socket: Socket, decided: HookAnswer): void {
  if (socket.destroyed) return;
  socket.end(`${JSON.stringify(decided)}\n`);
}

/** Asks the corral serving `socketPath`; whatever goes wrong on the way is a deny that says what. */
export function askGuard(socketPath: string, request: GuardRequest): Promise<HookAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (result: HookAnswer): void => {
      if (settled) return;
      settled = true;
      resolve(result);
    };
    const socket = createConnection(socketPath);
    socket.on('error', (error) => done({ effect: 'deny', reason: `corral's guard could not be reached at ${socketPath} (${error.message}); the call is denied` }));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('end', () => {
      try {
        const value: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        done(isHookAnswer(value) ? value : { effect: 'deny', reason: "corral's guard answered something the hook does not understand; the call is denied" });
      } catch {
        done({ effect: 'deny', reason: "corral's guard closed without an answer; the call is denied" });
      }
    });
    socket.on('connect', () => socket.end(JSON.stringify(request)));
  });
}
