import type { ExternalAgent } from './find-cli.js';
import type { StreamReader } from './stream.js';

/** What one start of an agent CLI is made from. */
export interface LaunchRequest {
  /** The task, or the feedback a resumed session gets. */
  prompt: string;
  /** corral's system prompt: the fence, the checks, the repository's instructions. */
  system: string;
  /** The model to ask for; undefined leaves the CLI's default. */
  model?: string;
  /** The session to resume (checks failed, a Stop hook blocked). */
  resume?: string;
  /** Read-only inside the sandbox: the run's settings for the agent and the guard socket. */
  controlDir: string;
  /** Writable and private to the run: the agent's config, sessions and caches. */
  stateDir: string;
  /** corral's sandbox holds the CLI: the agent's own sandbox is turned off (it would only be in the way). */
  confined: boolean;
  /** The shell command of the PreToolUse hook: `corral guard hook --agent <kind>`. */
  hookCommand: string;
  /** The model API's base URL inside the sandbox (corral's model proxy), for a CLI that takes it only from its config. */
  apiBaseUrl?: string;
}

/** How to start it: arguments, files to write first, and variables beside the tools' environment. */
export interface AgentLaunch {
  args: string[];
  files: { path: string; content: string }[];
  dirs: string[];
  env: Record<string, string>;
}

/** An agent as corral drives it. */
export interface AgentDriver {
  kind: ExternalAgent;
  launch(request: LaunchRequest): AgentLaunch;
  stream(): StreamReader;
}
