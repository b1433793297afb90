// The inside half of the model proxy: in the sandbox's empty network namespace, a relay
// listens on the namespace's own loopback and pipes each connection, byte for byte, to
// the proxy's Unix socket bound in from outside. It is Node (which every agent CLI needs
// anyway), passed as `node -e`, so it needs no file the sandbox must see and no socat.

/** The loopback port the bridge takes inside the sandbox when the caller names none: its namespace is empty, so only what the run starts there competes for it. */
export const MODEL_BRIDGE_PORT = 47_800;

/**
 * The relay, run as `node -e BRIDGE_SOURCE -- <socket> <port> [-- <command...>]`. With a
 * command, the relay starts it once it listens (so the agent never races it), passes on
 * stop signals, and exits as the command does; without one it prints
 * `listening 127.0.0.1:<port>` and serves until it is killed. Exit 70 when it cannot listen.
 */
export const BRIDGE_SOURCE = String.raw`'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const [socketPath, portText, separator, ...command] = process.argv.slice(1);
const port = Number(portText);
if (!socketPath || !Number.isInteger(port) || port < 1 || port > 65535 || (separator !== undefined && separator !== '--')) {
  process.stderr.write('corral model bridge: usage: <socket> <port> [-- <command...>]\n');
  process.exit(64);
}
const server = net.createServer({ allowHalfOpen: true }, (client) => {
  const upstream = net.connect({ path: socketPath, allowHalfOpen: true });
  const cut = () => { client.destroy(); upstream.destroy(); };
  client.on('error', cut);
  upstream.on('error', cut);
  client.pipe(upstream);
  upstream.pipe(client);
});
server.on('error', (error) => {
  process.stderr.write('corral model bridge: cannot listen on 127.0.0.1:' + port + ': ' + (error.code || error.message) + '\n');
  process.exit(70);
});
server.listen({ host: '127.0.0.1', port }, () => {
  if (command.length === 0) {
    process.stdout.write('listening 127.0.0.1:' + port + '\n');
    return;
  }
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => {
    process.stderr.write('corral model bridge: cannot start ' + command[0] + ': ' + (error.code || error.message) + '\n');
    process.exit(error.code === 'ENOENT' ? 127 : 126);
  });
  child.on('exit', (code, signal) => {
    if (signal) {
      for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.removeAllListeners(name);
      process.kill(process.pid, signal);
      return;
    }
    process.exit(code === null ? 70 : code);
  });
});
`;

export interface BridgeOptions {
  /** The proxy's socket, at the path it has inside the sandbox (bound at its own path: the same). */
  socketPath: string;
  /** The loopback port inside; default MODEL_BRIDGE_PORT. */
  port?: number;
  /** Started once the bridge listens, in its place as far as exit codes go; without it the bridge only serves. */
  command?: string[];
  /** The node to run it with, as seen inside the sandbox; default the one running corral. */
  node?: string;
}

/** The argv to run inside the sandbox: the bridge, then (with `command`) the agent under it. */
export function bridgeArgv(options: BridgeOptions): string[] {
  const port = options.port ?? MODEL_BRIDGE_PORT;
  const command = options.command ?? [];
  return [options.node ?? process.execPath, '-e', BRIDGE_SOURCE, '--', options.socketPath, String(port), ...(command.length > 0 ? ['--', ...command] : [])];
}
