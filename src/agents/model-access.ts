import type { ExternalAgent } from './find-cli.js';
import { proxiedModelAccess } from './model-proxy-access.js';

/** How an agent CLI reaches its model API for one run. */
export interface ModelAccess {
  /** Variables the CLI gets (and, through it, its tools: see docs/agents.md). */
  env: Record<string, string>;
  /** Whether the CLI needs the network in its sandbox to reach the API. */
  needsNetwork: boolean;
  /** The API base the CLI must be told in its config (Codex ignores OPENAI_BASE_URL); undefined when its variables say it. */
  baseUrl?: string;
  /** The CLI's argv as it must be started (under the proxy's bridge), before the sandbox wraps it. */
  command(argv: string[]): string[];
  /** Ends what was started for the run (the proxy). */
  close(): Promise<void>;
}

/** The variables each CLI reads its API key and endpoint from. */
const MODEL_VARIABLES: Record<ExternalAgent, string[]> = {
  'claude-code': ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'OPENAI_BASE_URL'],
};

const CREDENTIALS: Record<ExternalAgent, string[]> = {
  'claude-code': ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
};

/**
 * How the CLI reaches its API. Inside bubblewrap (`proxyDir` given: a folder the sandbox
 * shows at its own path) it goes through corral's model proxy: a loopback bridge in the
 * sandbox's empty network namespace to a unix socket outside, forwarding only to the API
 * origin and adding the key there, so the agent and its tools get a placeholder key and
 * no network. Without a sandbox (nothing to keep the key from the tools anyway) or without
 * a key in corral's environment (the CLI then fails to sign in, in its own words), the
 * variables are passed through and the CLI needs the network.
 */
export async function modelAccess(agent: ExternalAgent, hostEnv: NodeJS.ProcessEnv, proxyDir?: string): Promise<ModelAccess> {
  const hasKey = CREDENTIALS[agent].some((name) => (hostEnv[name] ?? '').trim() !== '');
  if (proxyDir !== undefined && hasKey) {
    const proxied = await proxiedModelAccess(agent, hostEnv, { dir: proxyDir });
    return { env: proxied.env, needsNetwork: false, baseUrl: proxied.baseUrl, command: proxied.command, close: proxied.close };
  }
  const env: Record<string, string> = {};
  for (const name of MODEL_VARIABLES[agent]) {
    const value = hostEnv[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return { env, needsNetwork: true, command: (argv) => argv, close: async () => undefined };
}
