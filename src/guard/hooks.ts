import path from 'node:path';
import { anchored, matchesEveryTool, DEFAULT_TIMEOUT_SECONDS, type CommandHook, type HookEvent, type HooksConfig } from '../policy/hooks-schema.js';
import { InternalError } from '../errors.js';
import { runCommand } from '../proc/run-command.js';

// Command hooks in the protocol other coding agents already speak (Claude Code's
// PreToolUse / PostToolUse / Stop): a hook is a bash command that gets one JSON object
// on stdin and answers with its exit code, so the guard scripts people already run
// work here unchanged. Exit 2 blocks and stderr says why; exit 0 lets the call go on;
// anything else is a broken hook, which is recorded but never blocks.

/** A hook answers in a line or two; more than this is noise, cut with a marker. */
const HOOK_OUTPUT_CAP = 64 * 1024;
/** The exit code by which a hook blocks, as the other agents define it. */
const BLOCKING_EXIT_CODE = 2;
/** Claude Code's hard cap on the context one hook hands the model; more is cut with a marker. */
const CONTEXT_CAP = 10_000;
/** The input fields that name a file or folder: hooks get them absolute, as Claude Code gives them. */
const PATH_FIELDS = ['file_path', 'path'] as const;

/**
 * How calls are approved, in Claude Code's words: `default` when a person answers asks,
 * `dontAsk` when nobody does and every ask is refused (an unattended run).
 */
export type PermissionMode = 'default' | 'dontAsk';

/** The shell's own exit codes for a command it could not start: not executable (126), not found or a bad interpreter (127). */
const CANNOT_START_EXIT_CODES = new Set([126, 127]);

/** Whether a hook never ran its own code: missing, not executable, a bad interpreter, or a spawn that failed. */
export function hookCouldNotStart(run: Pick<HookRun, 'exitCode' | 'timedOut'>): boolean {
  return !run.timedOut && (run.exitCode === null || CANNOT_START_EXIT_CODES.has(run.exitCode));
}

/** What the caller knows about the event; the site fields are added from `HookSite`. */
export interface HookPayload {
  tool_name?: string;
  /** The call's input as the tool parsed it; relative `file_path` and `path` are made absolute for the hook. */
  tool_input?: unknown;
  /** The model's id of the call. */
  tool_use_id?: string;
  /** PostToolUse: the tool's own result object (tools/types.ts `ToolOutput.response`). */
  tool_response?: unknown;
  stop_hook_active?: boolean;
}

/** Where hooks run: the run and its worktree. */
export interface HookSite {
  /** The run id. */
  sessionId: string;
  /** The run's trace file. */
  transcriptPath: string;
  /** The worktree. */
  cwd: string;
  /** The tool environment, already free of secrets; CLAUDE_PROJECT_DIR and CORRAL_PROJECT_DIR are added. */
  env: Record<string, string>;
  /**
   * corral's own environment, from which a hook's `env_from_host` names are taken: a hook
   * may get a token the agent's tools never see. Absent, those names are given nothing.
   */
  hostEnv?: NodeJS.ProcessEnv;
  /** Sent as `permission_mode`; `default` when absent. */
  permissionMode?: PermissionMode;
  /** The run's interrupt: a running hook is killed and no further hook starts. */
  signal: AbortSignal;
}

export interface HookRun {
  command: string;
  /** Null when the hook was killed (timeout, interrupt) or could not start. */
  exitCode: number | null;
  timedOut: boolean;
  stderr: string;
  stdout: string;
  durationMs: number;
  /** The input this hook answered with `updatedInput` (PreToolUse), for the trace. */
  updatedInput?: Record<string, unknown>;
  /** The `additionalContext` this hook answered. */
  context?: string;
  /** The `stopReason` of a `continue: false` answer ('' without one). */
  halt?: string;
}

export interface HookOutcome {
  /** A hook exited 2: the call (PreToolUse) is blocked / feedback (PostToolUse) / the stop is blocked (Stop). */
  blocked: boolean;
  /** The blocking hook's stderr (trimmed; if empty, a sentence naming the hook command and exit code 2). */
  reason: string;
  /** Every hook that ran, in order, for the trace. */
  runs: HookRun[];
  /** A hook answered `permissionDecision: "ask"` in JSON: the call needs approval even if the guard would allow it. */
  ask?: string;
  /**
   * PreToolUse: the input the hooks' `updatedInput` answers left, each hook seeing what the
   * one before it left. The caller validates and judges it again; it never loosens a decision.
   */
  updatedInput?: Record<string, unknown>;
  /** `additionalContext` answers, in hook order, for the model to read with the call's result. */
  context?: string[];
  /** A hook answered `continue: false`: the run ends, blocked, with this reason (its `stopReason`). */
  halt?: string;
}

export async function runHooks(
  config: HooksConfig | undefined,
  event: HookEvent,
  payload: HookPayload,
  site: HookSite,
): Promise<HookOutcome> {
  const hooks = selectHooks(config, event, payload.tool_name);
  const runs: HookRun[] = [];
  if (hooks.length === 0) return { blocked: false, reason: '', runs };

  let ask: string | undefined;
  let updatedInput: Record<string, unknown> | undefined;
  const context: string[] = [];
  const env = { ...site.env, CLAUDE_PROJECT_DIR: site.cwd, CORRAL_PROJECT_DIR: site.cwd };
  // What the hooks said besides the run records, added to every outcome.
  const said = (): Pick<HookOutcome, 'ask' | 'updatedInput' | 'context'> => ({
    ...(ask !== undefined ? { ask } : {}),
    ...(updatedInput !== undefined ? { updatedInput } : {}),
    ...(context.length > 0 ? { context } : {}),
  });
  for (const hook of hooks) {
    // An interrupted run decides nothing more; the caller stops on the signal itself.
    if (site.signal.aborted) break;
    // Each hook sees the input as the hooks before it left it, so a guard hook after a
    // rewriting one judges what would run.
    const input = `${JSON.stringify(buildInput(event, updatedInput === undefined ? payload : { ...payload, tool_input: updatedInput }, site))}\n`;
    const result = await runCommand({
      command: hook.command,
      cwd: site.cwd,
      env: { ...env, ...fromHost(hook.env_from_host, site.hostEnv) },
      timeoutMs: (hook.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000,
      signal: site.signal,
      outputCap: HOOK_OUTPUT_CAP,
      input,
      separateStderr: true,
    });
    const run: HookRun = {
      command: hook.command,
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      stderr: result.stderr ?? '',
      stdout: result.stdout ?? '',
      durationMs: result.durationMs,
    };
    runs.push(run);
    // Fail closed: a guard hook that cannot start guards nothing, so the call it guards is
    // denied (a hook that ran and failed is still only a warning, as the other agents do).
    if (event === 'PreToolUse' && hookCouldNotStart(run) && !site.signal.aborted) {
      const why = run.exitCode === null ? 'it could not be started' : `exit ${run.exitCode}: ${run.stderr.trim().split('\n').at(-1) || 'the shell could not start it'}`;
      return { blocked: true, reason: `the PreToolUse hook \`${hook.command}\` could not start (${why}); a guard hook that cannot run guards nothing, so the call is denied`, runs };
    }
    if (run.exitCode === BLOCKING_EXIT_CODE) {
      const reason = run.stderr.trim() || `hook \`${hook.command}\` exited with code 2 and wrote no reason on stderr`;
      return { blocked: true, reason, runs, ...said() };
    }
    const answer = run.exitCode === 0 ? jsonAnswer(run.stdout) : null;
    if (answer === null) continue;
    if (answer.context !== undefined) {
      context.push(answer.context);
      run.context = answer.context;
    }
    if (answer.halt !== undefined) {
      run.halt = answer.halt;
      // Claude Code stops before anything else the answer says: nothing more runs.
      const halt = answer.halt || `hook \`${hook.command}\` answered continue: false`;
      return { blocked: true, reason: halt, runs, halt, ...said() };
    }
    if (answer.effect === 'deny') return { blocked: true, reason: answer.reason || `hook \`${hook.command}\` answered deny`, runs, ...said() };
    if (answer.effect === 'ask' && ask === undefined) ask = answer.reason || `hook \`${hook.command}\` asked for approval`;
    if (event === 'PreToolUse' && answer.updatedInput !== undefined) {
      updatedInput = answer.updatedInput;
      run.updatedInput = answer.updatedInput;
    }
  }
  return { blocked: false, reason: '', runs, ...said() };
}

/** What a hook's JSON answer says, as Claude Code reads it. */
export interface HookAnswer {
  /** Only the tightening answers: deny (or block), and ask. An allow or approve never loosens the guard. */
  effect?: 'deny' | 'ask';
  reason: string;
  /** `hookSpecificOutput.updatedInput`: the whole new input of the call (PreToolUse). */
  updatedInput?: Record<string, unknown>;
  /** `hookSpecificOutput.additionalContext` (or a top-level one), cut at Claude Code's cap. */
  context?: string;
  /** `continue: false`: the run stops; its `stopReason`, or '' when it gave none. */
  halt?: string;
}

/**
 * The JSON a hook may print on stdout (exit 0) instead of exiting 2, as the other agents
 * read it; null when stdout is not a JSON object (plain text is only logged).
 */
export function jsonAnswer(stdout: string): HookAnswer | null {
  const text = stdout.trim();
  if (!text.startsWith('{')) return null;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) return null;
  const specific = (isObject(data.hookSpecificOutput) ? data.hookSpecificOutput : {}) as Record<string, unknown>;
  const reason = [specific.permissionDecisionReason, data.reason, data.stopReason].find((value): value is string => typeof value === 'string') ?? '';
  const answer: HookAnswer = { reason };
  if (specific.permissionDecision === 'deny' || data.decision === 'block') answer.effect = 'deny';
  else if (specific.permissionDecision === 'ask') answer.effect = 'ask';
  if (isObject(specific.updatedInput)) answer.updatedInput = specific.updatedInput;
  const context = [specific.additionalContext, data.additionalContext].find((value): value is string => typeof value === 'string' && value.trim() !== '');
  if (context !== undefined) answer.context = context.length > CONTEXT_CAP ? `${context.slice(0, CONTEXT_CAP)}\n[… cut at ${CONTEXT_CAP} characters]` : context;
  if (data.continue === false) answer.halt = typeof data.stopReason === 'string' ? data.stopReason.trim() : '';
  return answer;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The named variables of corral's own environment that a hook asked for; a name corral lacks is left out. */
function fromHost(names: readonly string[] | undefined, host: NodeJS.ProcessEnv | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names ?? []) {
    const value = host?.[name];
    if (value !== undefined) env[name] = value;
  }
  return env;
}

/** Whether any hook of `event` would run for this tool. */
export function hasHooksFor(config: HooksConfig | undefined, event: HookEvent, toolName: string | undefined): boolean {
  return selectHooks(config, event, toolName).length > 0;
}

/** The hooks of `event` whose group matches the tool, in config order. Stop ignores matchers. */
function selectHooks(config: HooksConfig | undefined, event: HookEvent, toolName: string | undefined): CommandHook[] {
  const selected: CommandHook[] = [];
  for (const group of config?.[event] ?? []) {
    if (event === 'Stop' || matchesTool(group.matcher, toolName ?? '')) selected.push(...group.hooks);
  }
  return selected;
}

function matchesTool(matcher: string | undefined, toolName: string): boolean {
  if (matcher === undefined || matchesEveryTool(matcher)) return true;
  return anchored(matcher).test(toolName);
}


/** The stdin object, with the field names and shapes Claude Code sends. */
function buildInput(event: HookEvent, payload: HookPayload, site: HookSite): Record<string, unknown> {
  const common = {
    session_id: site.sessionId,
    transcript_path: site.transcriptPath,
    cwd: site.cwd,
    permission_mode: site.permissionMode ?? 'default',
    hook_event_name: event,
  };
  const call = () => ({
    tool_name: payload.tool_name ?? '',
    tool_input: absolutePaths(payload.tool_input ?? {}, site.cwd),
    ...(payload.tool_use_id !== undefined ? { tool_use_id: payload.tool_use_id } : {}),
  });
  switch (event) {
    case 'PreToolUse':
      return { ...common, ...call() };
    case 'PostToolUse':
      return { ...common, ...call(), tool_response: payload.tool_response ?? null };
    case 'Stop':
      return { ...common, stop_hook_active: payload.stop_hook_active ?? false };
    default: {
      const unknown: never = event;
      throw new InternalError(`unknown hook event ${String(unknown)}`);
    }
  }
}

/**
 * The input with its `file_path` and `path` made absolute against the worktree, as Claude
 * Code hands them to hooks: a script that checks `"$path"` against `$(pwd)` works
 * whatever the model wrote. The trace keeps the model's own input.
 */
export function absolutePaths(input: unknown, cwd: string): unknown {
  if (!isObject(input)) return input;
  const out: Record<string, unknown> = { ...input };
  for (const field of PATH_FIELDS) {
    const value = out[field];
    if (typeof value === 'string' && value !== '' && !path.isAbsolute(value)) out[field] = path.resolve(cwd, value);
  }
  return out;
}
