import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { findExecutable } from '../proc/find-executable.js';
import { runProgram } from '../proc/run-program.js';
import type { AgentKind } from '../ticket/types.js';

/** An agent CLI corral starts: Claude Code or Codex. */
export type ExternalAgent = Exclude<AgentKind, 'corral'>;

/**
 * The oldest version of each CLI corral drives: the first whose headless mode, stream
 * format and PreToolUse hook protocol are the ones docs/agents.md describes (Claude Code:
 * `--settings`, `--setting-sources`, the `dontAsk` permission mode and `permissionDecision`
 * answers; Codex: PreToolUse hooks on by default, for shell, apply_patch and MCP calls).
 */
export const MINIMUM_VERSION: Record<ExternalAgent, string> = { 'claude-code': '2.1.0', codex: '0.124.0' };

/** The name each CLI has on PATH, when config names none. */
export const DEFAULT_COMMAND: Record<ExternalAgent, string> = { 'claude-code': 'claude', codex: 'codex' };

/** What installs each CLI, for the message when it is missing. */
const PACKAGE: Record<ExternalAgent, string> = { 'claude-code': '@anthropic-ai/claude-code', codex: '@openai/codex' };

export interface AgentCli {
  kind: ExternalAgent;
  /** Absolute path of the executable. */
  file: string;
  version: string;
}

/** The CLI found and new enough, or why not: a sentence for a usage error (exit 64). */
export type FoundCli = { ok: true; cli: AgentCli } | { ok: false; message: string; hint: string };

/**
 * Finds the agent's CLI (config's `agents.<kind>.command`, else its usual name on PATH)
 * and reads its `--version`: missing, unrunnable or older than MINIMUM_VERSION is a
 * problem said before anything runs.
 */
export async function findAgentCli(kind: ExternalAgent, command: string | undefined, env: NodeJS.ProcessEnv): Promise<FoundCli> {
  const named = command ?? DEFAULT_COMMAND[kind];
  const needed = `${kind} ${MINIMUM_VERSION[kind]} or newer`;
  const hint = `install ${PACKAGE[kind]}, or name the CLI in corral.yaml: agents: {${kind}: {command: /path/to/${DEFAULT_COMMAND[kind]}}}`;
  const file = named.includes('/') ? path.resolve(named) : findExecutable(named, env.PATH ?? '');
  if (file === undefined) return { ok: false, message: `agent ${kind}: \`${named}\` is not on PATH; ${needed} is needed`, hint };
  if (!existsSync(file)) return { ok: false, message: `agent ${kind}: ${file} does not exist; ${needed} is needed`, hint };
  // Asked as the user would ask it, outside any sandbox: it only says its version.
  const result = await runProgram(file, ['--version'], { timeoutMs: 30_000, env: Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined)) });
  const text = `${result.stdout.toString()} ${result.stderr.toString()}`;
  const version = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (result.exitCode !== 0 || version === null) {
    const why = result.error ?? (result.timedOut ? 'it did not answer in 30 s' : `it exited ${result.exitCode ?? result.signal} without a version`);
    return { ok: false, message: `agent ${kind}: \`${file} --version\` failed (${why}); ${needed} is needed`, hint: `check that ${file} is ${PACKAGE[kind]} and runs` };
  }
  const found = version[0];
  if (compareVersions(found, MINIMUM_VERSION[kind]) < 0) {
    return { ok: false, message: `agent ${kind}: ${file} is version ${found}; ${needed} is needed`, hint: `update ${PACKAGE[kind]}` };
  }
  // Started by its real path: npm's bin link lies in a folder the sandbox need not show.
  return { ok: true, cli: { kind, file: realOrSelf(file), version: found } };
}

/**
 * The folder of the CLI's real file (past npm's bin links), for the sandbox to show: a CLI
 * installed outside the system's folders (a temp prefix, a version manager) must still be
 * there inside. Undefined when it cannot be found; the run's own check says why.
 */
export function agentCliFolder(kind: ExternalAgent, command: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const named = command ?? DEFAULT_COMMAND[kind];
  const file = named.includes('/') ? path.resolve(named) : findExecutable(named, env.PATH ?? '');
  if (file === undefined) return undefined;
  try {
    return path.dirname(realpathSync(file));
  } catch {
    return undefined;
  }
}

function realOrSelf(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
}

/** Negative, zero or positive as `a` is older than, the same as or newer than `b` (x.y.z). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}
