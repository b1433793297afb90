import path from 'node:path';
import type { TurnBlock } from '../trace/records.js';
import type { AgentLaunch, LaunchRequest } from './launch.js';
import { jsonLine, usageOf, type AgentStreamEvent, type StreamReader } from './stream.js';

// Codex, headless: `codex exec --json`, its config (hooks included) written by corral into
// a CODEX_HOME of the run's own (docs/agents.md says why each is set).

/** A TOML basic string. */
function tomlString(value: string): string {
  return JSON.stringify(value);
}

/**
 * The run's config.toml: hooks on, every tool call to corral's PreToolUse hook, approvals
 * never asked (corral's answer is the one that counts), and Codex's own sandbox off only
 * where corral's bubblewrap holds the whole CLI.
 */
export function codexConfig(hookCommand: string, confined: boolean, apiBaseUrl?: string): string {
  return [
    '# Written by corral for one run; rewritten at every start.',
    // Codex reads no OPENAI_BASE_URL: the model proxy's loopback base goes here.
    ...(apiBaseUrl === undefined ? [] : [`openai_base_url = ${tomlString(apiBaseUrl)}`]),
    `approval_policy = "never"`,
    `sandbox_mode = ${tomlString(confined ? 'danger-full-access' : 'workspace-write')}`,
    '',
    // On by default since 0.124; said all the same (`codex_hooks` is the name every version knows).
    '[features]',
    'codex_hooks = true',
    '',
    // No matcher: every tool that takes hooks (shell commands as Bash, apply_patch, MCP tools).
    '[[hooks.PreToolUse]]',
    '[[hooks.PreToolUse.hooks]]',
    'type = "command"',
    `command = ${tomlString(hookCommand)}`,
    'timeout = 86400',
    '',
  ].join('\n');
}

export function codexLaunch(request: LaunchRequest): AgentLaunch {
  const home = path.join(request.stateDir, 'codex');
  // Codex takes no second system prompt on the command line: corral's comes first in the prompt.
  const prompt = request.resume === undefined ? `${request.system}\n\n${request.prompt}` : request.prompt;
  // Codex skips a hook nobody has trusted (trust is kept per hook's hash in its config):
  // corral wrote this one into a CODEX_HOME of the run's own, so it is vetted, and the
  // repository's own .codex layer is not loaded (the project is not trusted there).
  const common = ['--json', '--skip-git-repo-check', '--dangerously-bypass-hook-trust', ...(request.model === undefined ? [] : ['--model', request.model])];
  const args = request.resume === undefined ? ['exec', ...common, prompt] : ['exec', 'resume', ...common, request.resume, prompt];
  return {
    args,
    files: [{ path: path.join(home, 'config.toml'), content: codexConfig(request.hookCommand, request.confined, request.apiBaseUrl) }],
    dirs: [home],
    env: { CODEX_HOME: home },
  };
}

/**
 * `codex exec --json`: `thread.started` (the session), `item.*` (messages, commands, file
 * changes, MCP calls), `turn.completed` with the turn's usage, `turn.failed` and `error`.
 * A Codex turn is the whole answer to one prompt, so each becomes one model turn here.
 */
export function codexStream(): StreamReader {
  let content: TurnBlock[] = [];
  let lastText = '';
  let failure: string | undefined;
  let ended = false;
  return {
    push(line) {
      const event = jsonLine(line);
      if (event === undefined) return [];
      const item = (event.item ?? {}) as Record<string, unknown>;
      switch (event.type) {
        case 'thread.started':
          return typeof event.thread_id === 'string' ? [{ kind: 'session', sessionId: event.thread_id }] : [];
        case 'item.completed': {
          const id = typeof item.id === 'string' ? item.id : `item_${content.length}`;
          if (item.type === 'agent_message' && typeof item.text === 'string') {
            content.push({ type: 'text', text: item.text });
            lastText = item.text;
            return [];
          }
          if (item.type === 'command_execution') {
            content.push({ type: 'tool_use', id, name: 'shell', input: { command: item.command } });
            return [{ kind: 'tool_result', id, content: String(item.aggregated_output ?? ''), isError: item.exit_code !== 0, ...(item.status === 'declined' ? { declined: true } : {}) }];
          }
          if (item.type === 'file_change') {
            content.push({ type: 'tool_use', id, name: 'apply_patch', input: { changes: item.changes } });
            return [];
          }
          if (item.type === 'mcp_tool_call') {
            content.push({ type: 'tool_use', id, name: `mcp__${String(item.server)}__${String(item.tool)}`, input: item.arguments ?? {} });
            return [];
          }
          return [];
        }
        case 'turn.completed': {
          const turn: AgentStreamEvent = { kind: 'turn', model: 'codex', content, stopReason: 'end_turn', usage: usageOf(event.usage) };
          content = [];
          ended = true;
          return [turn, { kind: 'result', ok: true, text: lastText }];
        }
        case 'turn.failed':
        case 'error': {
          const error = (event.error ?? {}) as Record<string, unknown>;
          failure = typeof error.message === 'string' ? error.message : typeof event.message === 'string' ? event.message : 'the turn failed';
          return [];
        }
        default:
          return [];
      }
    },
    // A Codex turn is whole only at turn.completed.
    flush: () => [],
    end() {
      if (ended || failure === undefined) return [];
      const turn: AgentStreamEvent[] = content.length > 0 ? [{ kind: 'turn', model: 'codex', content, stopReason: 'end_turn', usage: usageOf(undefined) }] : [];
      content = [];
      return [...turn, { kind: 'result', ok: false, text: lastText, error: failure }];
    },
  };
}
