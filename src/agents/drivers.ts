import { createHash } from 'node:crypto';
import os from 'node:os';
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

/** The longest socket path that fits every system's sockaddr_un (104 bytes on macOS, 108 on Linux), with room. */
const MAX_SOCKET_PATH = 100;

/**
 * The run's control folder for its agent CLI: the agent's settings and the guard socket.
 * The sandbox shows it read-only, so no call can replace the socket or the settings. It
 * is the run directory's `agent/`, unless the socket's path would be too long for a unix
 * socket there: then a short folder of the run's own in the temp dir (removed
 * when the run ends).
 */
export function agentControlDir(runDir: string): string {
  const inRun = path.join(runDir, 'agent');
  if (Buffer.byteLength(path.join(inRun, 'guard.sock')) <= MAX_SOCKET_PATH) return inRun;
  return path.join(os.tmpdir(), `corral-agent-${createHash('sha256').update(runDir).digest('hex').slice(0, 16)}`);
}
