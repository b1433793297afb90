import type { ExternalAgent } from './find-cli.js';

// The PreToolUse hook protocol both agent CLIs speak (Claude Code's, which Codex took
// over): what a hook reads on stdin, how an agent's tool call is said in corral's own
// tools (so one guard judges both, and `corral replay` judges the record), and the answer
// the hook prints. Plain data in, plain data out: the socket and the CLI are elsewhere.

/** The environment variable that names the running corral's guard socket. */
export const GUARD_SOCKET_ENV = 'CORRAL_GUARD_SOCKET';

/** What a PreToolUse hook is told about one call. */
export interface HookCall {
  toolName: string;
  toolInput: unknown;
  toolUseId: string;
  sessionId?: string;
  cwd?: string;
}

/** The hook's stdin read as a call, or why it cannot be (then the call is denied). */
export function parseHookInput(text: string): { ok: true; call: HookCall } | { ok: false; reason: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `the hook input is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (data === null || typeof data !== 'object') return { ok: false, reason: 'the hook input is not a JSON object' };
  const record = data as Record<string, unknown>;
  if (typeof record.tool_name !== 'string' || record.tool_name === '') return { ok: false, reason: 'the hook input names no tool_name' };
  if (record.hook_event_name !== undefined && record.hook_event_name !== 'PreToolUse') return { ok: false, reason: `corral's guard hook answers PreToolUse, not ${String(record.hook_event_name)}` };
  return {
    ok: true,
    call: {
      toolName: record.tool_name,
      toolInput: record.tool_input ?? {},
      toolUseId: typeof record.tool_use_id === 'string' && record.tool_use_id !== '' ? record.tool_use_id : `call_${Date.now().toString(36)}`,
      ...(typeof record.session_id === 'string' ? { sessionId: record.session_id } : {}),
      ...(typeof record.cwd === 'string' ? { cwd: record.cwd } : {}),
    },
  };
}

/** One of corral's own calls (Bash, Read, Write, Edit, Glob, Grep) an agent's call amounts to. */
export interface CorralCall {
  tool: string;
  input: Record<string, unknown>;
}

/**
 * How corral judges an agent's tool call:
 * - `calls`: as these calls of corral's own tools (all must be allowed);
 * - `internal`: it touches nothing outside the agent (a to-do list, reading a background
 *   shell's output, a subagent whose own calls come through this hook too): allowed;
 * - `unknown`: no tool of corral's says what it does: judged under its own name, which
 *   corral's guard denies as an unknown tool (web fetches and MCP tools included).
 */
export type MappedCall = { kind: 'calls'; calls: CorralCall[] } | { kind: 'internal' } | { kind: 'unknown' };

/** Tools that act on nothing but the agent's own state. */
const INTERNAL_TOOLS = new Set(['TodoWrite', 'TodoRead', 'Task', 'Agent', 'BashOutput', 'TaskOutput', 'KillShell', 'KillBash', 'TaskStop', 'ExitPlanMode', 'update_plan']);

export function mapAgentCall(agent: ExternalAgent, toolName: string, rawInput: unknown): MappedCall {
  if (INTERNAL_TOOLS.has(toolName)) return { kind: 'internal' };
  const input = (rawInput !== null && typeof rawInput === 'object' && !Array.isArray(rawInput) ? rawInput : {}) as Record<string, unknown>;
  const pick = (...names: string[]): Record<string, unknown> => Object.fromEntries(names.filter((name) => input[name] !== undefined).map((name) => [name, input[name]]));
  switch (toolName) {
    case 'Bash':
    case 'shell':
    case 'local_shell':
    case 'exec_command':
    case 'container.exec': {
      const command = shellCommand(input.command ?? input.cmd);
      if (command === undefined) return { kind: 'calls', calls: [{ tool: 'Bash', input }] };
      const bash: Record<string, unknown> = { command, ...pick('description') };
      if (typeof input.timeout === 'number') bash.timeout = input.timeout;
      // A command Codex starts elsewhere than the worktree root starts there: said in the command itself.
      const workdir = typeof input.workdir === 'string' ? input.workdir : undefined;
      if (workdir !== undefined && agent === 'codex') bash.command = `cd ${quote(workdir)} && ${command}`;
      return { kind: 'calls', calls: [{ tool: 'Bash', input: bash }] };
    }
    case 'Read':
      return { kind: 'calls', calls: [{ tool: 'Read', input: pick('file_path', 'offset', 'limit') }] };
    case 'view_image':
      // Codex reads the image file from disk: judged as the Read of that path it is.
      return { kind: 'calls', calls: [{ tool: 'Read', input: { file_path: input.path } }] };
    case 'NotebookRead':
      return { kind: 'calls', calls: [{ tool: 'Read', input: { file_path: input.notebook_path } }] };
    case 'Write':
      return { kind: 'calls', calls: [{ tool: 'Write', input: pick('file_path', 'content') }] };
    case 'Edit':
      return { kind: 'calls', calls: [{ tool: 'Edit', input: pick('file_path', 'old_string', 'new_string', 'replace_all') }] };
    case 'MultiEdit': {
      const edits = Array.isArray(input.edits) ? (input.edits as unknown[]) : [];
      if (edits.length === 0) return { kind: 'calls', calls: [{ tool: 'Edit', input: pick('file_path') }] };
      return {
        kind: 'calls',
        calls: edits.map((edit) => {
          const e = (edit !== null && typeof edit === 'object' ? edit : {}) as Record<string, unknown>;
          return { tool: 'Edit', input: { file_path: input.file_path, old_string: e.old_string, new_string: e.new_string, ...(e.replace_all !== undefined ? { replace_all: e.replace_all } : {}) } };
        }),
      };
    }
    case 'NotebookEdit':
      // Judged as a write of the notebook: where it goes is what the guard decides on.
      return { kind: 'calls', calls: [{ tool: 'Write', input: { file_path: input.notebook_path, content: typeof input.new_source === 'string' ? input.new_source : '' } }] };
    case 'Glob':
      return { kind: 'calls', calls: [{ tool: 'Glob', input: pick('pattern', 'path') }] };
    case 'LS':
      return { kind: 'calls', calls: [{ tool: 'Glob', input: { pattern: '*', ...pick('path') } }] };
    case 'Grep':
      return { kind: 'calls', calls: [{ tool: 'Grep', input: pick('pattern', 'path', 'glob', 'output_mode', '-i', '-n', '-A', '-B', '-C', 'head_limit', 'multiline') }] };
    case 'apply_patch': {
      const patch = typeof input.command === 'string' ? input.command : typeof input.patch === 'string' ? input.patch : typeof input.input === 'string' ? input.input : undefined;
      if (patch === undefined) return { kind: 'unknown' };
      const paths = patchPaths(patch);
      // A patch that names no file cannot be judged by where it writes.
      if (paths.length === 0) return { kind: 'unknown' };
      return { kind: 'calls', calls: paths.map((file) => ({ tool: 'Write', input: { file_path: file, content: '' } })) };
    }
    default:
      return { kind: 'unknown' };
  }
}

/** The files an apply_patch envelope adds, updates, deletes or moves to. */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  for (const line of patch.split('\n')) {
    const match = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.+?)\s*$/.exec(line);
    if (match && !paths.includes(match[1]!)) paths.push(match[1]!);
  }
  return paths;
}

/** A command as a shell string: Codex may send an argv (`["bash", "-lc", "…"]`). */
function shellCommand(command: unknown): string | undefined {
  if (typeof command === 'string') return command;
  if (!Array.isArray(command) || !command.every((part) => typeof part === 'string')) return undefined;
  const argv = command as string[];
  if (argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0]!) && (argv[1] === '-lc' || argv[1] === '-c')) return argv[2];
  return argv.map(quote).join(' ');
}

function quote(word: string): string {
  return /^[A-Za-z0-9_./=:@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** corral's answer to one call. */
export interface HookAnswer {
  effect: 'allow' | 'deny' | 'ask';
  reason: string;
}

/**
 * The hook's output for the agent: JSON on stdout with the decision and its reason, which
 * both agents read as `hookSpecificOutput.permissionDecision`. A deny also carries the
 * reason on stderr, for a person reading the agent's log. Where the answer were not
 * understood, the agent's own permission mode (`dontAsk`, `never`) refuses the call.
 */
export function formatHookAnswer(answer: HookAnswer): { stdout: string; stderr: string; exitCode: number } {
  const output = { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: answer.effect, permissionDecisionReason: answer.reason } };
  return { stdout: `${JSON.stringify(output)}\n`, stderr: answer.effect === 'deny' ? `${answer.reason}\n` : '', exitCode: 0 };
}

/** What the hook sends the running corral, one request per connection. */
export interface GuardRequest {
  agent: ExternalAgent;
  call: HookCall;
}

export function isGuardRequest(value: unknown): value is GuardRequest {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  const call = v.call as Record<string, unknown> | undefined;
  return (v.agent === 'claude-code' || v.agent === 'codex') && call !== null && typeof call === 'object' && typeof call.toolName === 'string' && typeof call.toolUseId === 'string';
}

export function isHookAnswer(value: unknown): value is HookAnswer {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (v.effect === 'allow' || v.effect === 'deny' || v.effect === 'ask') && typeof v.reason === 'string';
}
