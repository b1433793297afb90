import path from 'node:path';
import { claudeCodeLaunch, claudeCodeStream } from './claude-code.js';
import { codexLaunch, codexStream } from './codex.js';
import type { ExternalAgent } from './find-cli.js';
import type { AgentDriver } from './launch.js';

const DRIVERS: Record<ExternalAgent, AgentDriver> = {
  'claude-code': { kind: 'claude-code', launch: claudeCodeLaunch, stream: claudeCodeStream },
  codex: { kind: 'codex', launch: codexLaunch, stream: codexStream },
};

export function driverOf(kind: ExternalAgent): AgentDriver {
  return DRIVERS[kind];
}

/**
 * The run's control folder for its agent CLI: the agent's settings and the guard socket.
 * The sandbox shows it read-only, so no call can replace the socket or the settings.
 */
export function agentControlDir(runDir: string): string {
  return path.join(runDir, 'agent');
}
