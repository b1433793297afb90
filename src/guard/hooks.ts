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
/** The shell's own exit codes for a command it could not start: not executable (126), not found or a bad interpreter (127). */
const CANNOT_START_EXIT_CODES = new Set([126, 127]);

/** Whether a hook never ran its own code: missing, not executable, a bad interpreter, or a spawn that failed. */
export function hookCouldNotStart(run: Pick<HookRun, 'exitCode' | 'timedOut'>): boolean {
  return !run.timedOut && (run.exitCode === null || CANNOT_START_EXIT_CODES.has(run.exitCode));
}

/** What the caller knows about the event; the site fields are added from `HookSite`. */
export interface HookPayload {
  tool_name?: string;
  tool_input?: unknown;
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
}

export async function runHooks(
  config: HooksConfig | undefined,
  event: HookEvent,
  payload: HookPayload,
  site: HookSite,
): Promise<HookOutcome> {
  const hooks = selectHooks(config, event, payload.tool_name);
  const runs: HookRun[] = [];
  let ask: string | undefined;
  if (hooks.length === 0) return { blocked: false, reason: '', runs };

  const input = `${JSON.stringify(buildInput(event, payload, site))}\n`;
  const env = { ...site.env, CLAUDE_PROJECT_DIR: site.cwd, CORRAL_PROJECT_DIR: site.cwd };
  for (const hook of hooks) {
    // An interrupted run decides nothing more; the caller stops on the signal itself.
    if (site.signal.aborted) break;
    const result = await runCommand({
      command: hook.command,
      cwd: site.cwd,
      env,
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
      return { blocked: true, reason, runs };
    }
    const answer = run.exitCode === 0 ? jsonAnswer(run.stdout) : null;
    if (answer?.effect === 'deny') return { blocked: true, reason: answer.reason || `hook \`${hook.command}\` answered deny`, runs };
    if (answer?.effect === 'ask' && ask === undefined) ask = answer.reason || `hook \`${hook.command}\` asked for approval`;
  }
  return { blocked: false, reason: '', runs, ...(ask !== undefined ? { ask } : {}) };
}

/**
 * The JSON a hook may print on stdout (exit 0) instead of exiting 2, as the other agents
 * read it. Only its tightening answers count: deny or block, and ask; an "allow" or
 * "approve" never loosens the guard's decision.
 */
export function jsonAnswer(stdout: string): { effect: 'deny' | 'ask'; reason: string } | null {
  const text = stdout.trim();
  if (!text.startsWith('{')) return null;
  let data: Record<string, unknown>;
  try {
    data = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return null;
  }
  const specific = (data.hookSpecificOutput ?? {}) as Record<string, unknown>;
  const reason = [specific.permissionDecisionReason, data.reason, data.stopReason].find((value): value is string => typeof value === 'string') ?? '';
  if (specific.permissionDecision === 'deny' || data.decision === 'block' || data.continue === false) return { effect: 'deny', reason };
  if (specific.permissionDecision === 'ask') return { effect: 'ask', reason };
  return null;
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


/** The stdin object, with the field names the other agents send. */
function buildInput(event: HookEvent, payload: HookPayload, site: HookSite): Record<string, unknown> {
  const common = {
    session_id: site.sessionId,
    transcript_path: site.transcriptPath,
    cwd: site.cwd,
    hook_event_name: event,
  };
  switch (event) {
    case 'PreToolUse':
      return { ...common, tool_name: payload.tool_name ?? '', tool_input: payload.tool_input ?? {} };
    case 'PostToolUse':
      return {
        ...common,
        tool_name: payload.tool_name ?? '',
        tool_input: payload.tool_input ?? {},
        tool_response: payload.tool_response ?? null,
      };
    case 'Stop':
      return { ...common, stop_hook_active: payload.stop_hook_active ?? false };
    default: {
      const unknown: never = event;
      throw new InternalError(`unknown hook event ${String(unknown)}`);
    }
  }
}
