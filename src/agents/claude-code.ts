import path from 'node:path';
import type { TurnBlock } from '../trace/records.js';
import { jsonLine, resultText, usageOf, type AgentStreamEvent, type StreamReader } from './stream.js';
import type { AgentLaunch, LaunchRequest } from './launch.js';

// Claude Code, headless: `claude -p … --output-format stream-json --verbose`, its settings
// written by corral for the run (docs/agents.md says why each is set).

/**
 * The run's settings for Claude Code, given with `--settings`: every tool call goes to
 * corral's PreToolUse hook; `dontAsk` refuses whatever the hook did not allow (a hook that
 * could not run included), so corral's answer is the one that counts; Claude Code's own
 * sandbox stays off because corral's bubblewrap holds the whole CLI.
 */
export function claudeCodeSettings(hookCommand: string, confined: boolean): Record<string, unknown> {
  return {
    hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: hookCommand, timeout: 86_400 }] }] },
    permissions: { defaultMode: 'dontAsk', allow: [], deny: [], ask: [] },
    // Off only inside corral's sandbox, which holds the whole CLI; outside it, Claude Code's own choice stands.
    ...(confined ? { sandbox: { enabled: false } } : {}),
    disableAllHooks: false,
    enableAllProjectMcpServers: false,
    includeCoAuthoredBy: false,
  };
}

export function claudeCodeLaunch(request: LaunchRequest): AgentLaunch {
  const { controlDir, stateDir } = request;
  const settingsFile = path.join(controlDir, 'claude-settings.json');
  const configDir = path.join(stateDir, 'claude');
  const args = [
    '-p',
    request.prompt,
    '--output-format',
    'stream-json',
    '--verbose',
    '--settings',
    settingsFile,
    // Only the run's own files: the repository's .claude settings and the user's are not
    // read (corral read them already: their rules and hooks are in its guard and pipeline).
    '--setting-sources',
    'user',
    '--permission-mode',
    'dontAsk',
    '--strict-mcp-config',
    '--append-system-prompt',
    request.system,
    ...(request.model === undefined ? [] : ['--model', request.model]),
    ...(request.resume === undefined ? [] : ['--resume', request.resume]),
  ];
  return {
    args,
    files: [
      { path: settingsFile, content: `${JSON.stringify(claudeCodeSettings(request.hookCommand, request.confined), null, 2)}\n` },
      // Rewritten at every start: whatever a call wrote there in the last session is gone.
      { path: path.join(configDir, 'settings.json'), content: '{}\n' },
    ],
    dirs: [configDir],
    env: {
      CLAUDE_CONFIG_DIR: configDir,
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      DISABLE_BUG_COMMAND: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    },
  };
}

/**
 * Claude Code's stream-json: `system` (init, with the session), `assistant` (one event per
 * content block; the blocks of one message share its id and usage), `user` (tool results),
 * `result` (how the session ended, with its cost).
 */
export function claudeCodeStream(): StreamReader {
  let held: { id: string; model: string; content: TurnBlock[]; stopReason: string | null; usage: unknown } | undefined;
  let refused = false;
  const flush = (): AgentStreamEvent[] => {
    if (held === undefined) return [];
    const turn = held;
    held = undefined;
    const stopReason = turn.stopReason ?? (turn.content.some((block) => block.type === 'tool_use') ? 'tool_use' : 'end_turn');
    return [{ kind: 'turn', model: turn.model, content: turn.content, stopReason, usage: usageOf(turn.usage) }];
  };
  return {
    push(line) {
      const event = jsonLine(line);
      if (event === undefined) return [];
      switch (event.type) {
        case 'system':
          return typeof event.session_id === 'string' && event.subtype === 'init' ? [...flush(), { kind: 'session', sessionId: event.session_id }] : [];
        case 'assistant': {
          const message = (event.message ?? {}) as Record<string, unknown>;
          const id = typeof message.id === 'string' ? message.id : `msg_${Math.random().toString(36).slice(2)}`;
          const out = held !== undefined && held.id !== id ? flush() : [];
          held ??= { id, model: typeof message.model === 'string' ? message.model : 'unknown', content: [], stopReason: null, usage: message.usage };
          for (const block of Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : []) {
            if (block.type === 'text' && typeof block.text === 'string') held.content.push({ type: 'text', text: block.text });
            else if (block.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') held.content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input ?? {} });
          }
          if (typeof message.stop_reason === 'string') held.stopReason = message.stop_reason;
          if (message.stop_reason === 'refusal') refused = true;
          if (message.usage !== undefined) held.usage = message.usage;
          return out;
        }
        case 'user': {
          const out = flush();
          const message = (event.message ?? {}) as Record<string, unknown>;
          for (const block of Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : []) {
            if (block.type === 'tool_result' && typeof block.tool_use_id === 'string') out.push({ kind: 'tool_result', id: block.tool_use_id, content: resultText(block.content), isError: block.is_error === true });
          }
          return out;
        }
        case 'result': {
          const out = flush();
          const text = typeof event.result === 'string' ? event.result : '';
          const costUsd = typeof event.total_cost_usd === 'number' ? event.total_cost_usd : undefined;
          const failed = event.is_error === true || (typeof event.subtype === 'string' && event.subtype !== 'success');
          if (event.stop_reason === 'refusal') refused = true;
          out.push({
            kind: 'result',
            ok: !failed && !refused,
            text,
            ...(failed ? { error: text || `the session ended with ${String(event.subtype)}` } : {}),
            ...(refused ? { refused: true } : {}),
            ...(costUsd === undefined ? {} : { costUsd }),
          });
          return out;
        }
        default:
          return [];
      }
    },
    flush,
    end: () => flush(),
  };
}
