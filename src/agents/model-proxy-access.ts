import { bridgeArgv, MODEL_BRIDGE_PORT } from './model-proxy-bridge.js';
import { modelUpstream, startModelProxy, type ModelAgent, type ModelProxyEvent } from './model-proxy.js';

// One run's model access through the proxy, in the shape a runner plugs in: the
// variables the agent CLI gets (a loopback base URL and a placeholder key), its argv put
// under the bridge, and the socket the sandbox must show.

export interface ProxiedModelAccess {
  /** For the agent CLI's environment: `ANTHROPIC_BASE_URL` + placeholder key (or the OpenAI ones). No secret. */
  env: Record<string, string>;
  /**
   * The API base inside the sandbox (`http://127.0.0.1:47800`, `…/v1` for Codex). Codex
   * (0.169) ignores OPENAI_BASE_URL: give it this as `openai_base_url` in its config.toml
   * or as `-c openai_base_url="…"`.
   */
  baseUrl: string;
  /** The CLI needs no network in its sandbox: the bridge is on the sandbox's own loopback. */
  needsNetwork: false;
  /** The proxy's socket: the sandbox must show it at this path (a folder bound read-only, or the sandbox's `sockets`). */
  socketPath: string;
  /** The CLI's argv under the bridge, to hand to the sandbox's `wrap` in its place. */
  command(argv: string[]): string[];
  close(): Promise<void>;
}

export interface ProxiedModelAccessOptions {
  /** The run's folder for the socket (see ModelProxyOptions.dir). */
  dir: string;
  /** The bridge's loopback port inside; default MODEL_BRIDGE_PORT. */
  port?: number;
  /** node as the sandbox sees it; default the one running corral. */
  node?: string;
  onRequest?: (event: ModelProxyEvent) => void;
}

/** Starts the proxy for `agent` from corral's environment (a usage error without a key). */
export async function proxiedModelAccess(agent: ModelAgent, hostEnv: NodeJS.ProcessEnv, options: ProxiedModelAccessOptions): Promise<ProxiedModelAccess> {
  const model = modelUpstream(agent, hostEnv);
  const proxy = await startModelProxy({ dir: options.dir, upstream: model.upstream, credential: model.credential, ...(options.onRequest ? { onRequest: options.onRequest } : {}) });
  const port = options.port ?? MODEL_BRIDGE_PORT;
  return {
    env: model.agentEnv(proxy.baseUrlFor(port)),
    baseUrl: proxy.baseUrlFor(port),
    needsNetwork: false,
    socketPath: proxy.socketPath,
    command: (argv) => bridgeArgv({ socketPath: proxy.socketPath, port, command: argv, ...(options.node ? { node: options.node } : {}) }),
    close: () => proxy.close(),
  };
}
