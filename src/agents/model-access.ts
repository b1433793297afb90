import type { ExternalAgent } from './find-cli.js';

/** How an agent CLI reaches its model API for one run. */
export interface ModelAccess {
  /** Variables the CLI gets (and, through it, its tools: see docs/agents.md). */
  env: Record<string, string>;
  /** Whether the CLI needs the network in its sandbox to reach the API. */
  needsNetwork: boolean;
  /** Ends what was started for the run (a proxy); nothing to end yet. */
  close(): Promise<void>;
}

/** The variables each CLI reads its API key and endpoint from. */
const MODEL_VARIABLES: Record<ExternalAgent, string[]> = {
  'claude-code': ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'ANTHROPIC_BASE_URL'],
  codex: ['OPENAI_API_KEY', 'CODEX_API_KEY', 'OPENAI_BASE_URL'],
};

/**
 * The one seam where the model proxy plugs in (src/agents/model-proxy.ts, issue 25 item 3):
 * until it does, the key and endpoint are passed through from corral's environment, and
 * the CLI needs the network to reach them. With the proxy, this returns a loopback base
 * URL bridged to a unix socket outside the sandbox, no key, and `needsNetwork: false`.
 */
export async function modelAccess(agent: ExternalAgent, hostEnv: NodeJS.ProcessEnv): Promise<ModelAccess> {
  const env: Record<string, string> = {};
  for (const name of MODEL_VARIABLES[agent]) {
    const value = hostEnv[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  return { env, needsNetwork: true, close: async () => undefined };
}
