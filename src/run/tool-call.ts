import type { ToolUse } from '../agent/loop.js';
import type { Approver, ApprovalAnswer } from '../guard/approval/approver.js';
import type { Decision } from '../guard/decide.js';
import type { Guard, Verdict } from '../guard/guard.js';
import { staysInProcessGroup } from '../guard/process-group.js';
import { refusalText } from '../guard/refusal.js';
import { hasHooksFor, runHooks, type HookOutcome, type HookPayload, type HookSite } from '../guard/hooks.js';
import { type HookEvent, type HooksConfig } from '../policy/hooks-schema.js';
import type { EmitEvent } from '../trace/events.js';
import { describeCall as describe } from '../text/describe-call.js';
import { parseToolCall } from '../tools/index.js';
import type { ToolContext, ToolOutput } from '../tools/types.js';
import type { CallRecord } from '../trace/result.js';

export interface ToolCallLedger {
  calls: number;
  denied: CallRecord[];
  /** Every ask, with its answer. */
  asked: CallRecord[];
  streak: RefusalStreak;
}

/**
 * Counts denied or refused calls in a row, so a run that keeps hitting the policy stops
 * (blocked) instead of burning its budget. An allowed or approved call resets it; an
 * invalid call is a model's slip, not a policy verdict, and counts neither way.
 */
export class RefusalStreak {
  inARow = 0;

  noteAllowed(): void {
    this.inARow = 0;
  }

  noteRefused(): void {
    this.inARow += 1;
  }
}

/** What stands between a tool call and its effect: hooks, then the guard, then the approver. */
export interface CallGate {
  guard: Guard;
  approver: Approver;
  hooks: HooksConfig | undefined;
  /** Where hooks run, for a call that may be interrupted by `signal`. */
  hookSite(signal: AbortSignal): HookSite;
  worktree: string;
  ticketId: string;
  /** A hook script (relative path) whose content changed since the run started, or null. */
  changedHookScript(): string | null;
  /** Hooks that failed without blocking (an exit code other than 0 and 2, a timeout). */
  onBrokenHook(event: HookEvent, command: string, what: string): void;
}

/** One call end to end: hooks, parse, resolve paths, decide, ask, then run only what was allowed. */
export async function runToolCall(
  use: ToolUse,
  step: number,
  context: ToolContext,
  emit: EmitEvent,
  ledger: ToolCallLedger,
  gate: CallGate,
): Promise<ToolOutput> {
  ledger.calls += 1;
  emit({ type: 'tool_call', step, id: use.id, tool: use.name, input: use.input });
  const started = performance.now();
  const finish = (output: ToolOutput): ToolOutput => {
    emit({
      type: 'tool_result',
      step,
      id: use.id,
      tool: use.name,
      isError: output.isError,
      bytes: Buffer.byteLength(output.content),
      durationMs: Math.round(performance.now() - started),
    });
    return output;
  };
  const refuse = (decision: Decision, into: CallRecord[], extra: Partial<CallRecord> = {}): ToolOutput => {
    into.push({ step, tool: use.name, ...decision, call: describe(use.name, use.input), ...extra });
    ledger.streak.noteRefused();
    return finish({ content: refusalText(decision), isError: true });
  };
  const hooks = (event: HookEvent, payload: HookPayload): Promise<HookOutcome> => runGateHooks(gate, event, payload, context.signal, emit, step);

  const parsed = parseToolCall(use.name, use.input);
  if (!parsed.ok) {
    const record = { step, tool: use.name, effect: 'deny' as const, rule: 'tool.invalid-call', scope: 'baseline' as const, reason: parsed.error, call: describe(use.name, use.input) };
    ledger.denied.push(record);
    emit({ type: 'decision', step, id: use.id, tool: use.name, effect: 'deny', rule: record.rule, scope: record.scope, reason: record.reason, paths: [], commands: [] });
    return finish({ content: parsed.error, isError: true });
  }

  // A hook runs first and can only tighten: passing it still leaves the guard to decide.
  const pre = await hooks('PreToolUse', { tool_name: use.name, tool_input: use.input });
  // An interrupt kills a hook before it could block: the call must not run on its silence.
  const hookVerdict: Decision | null = context.signal.aborted
    ? { effect: 'deny', rule: 'run.interrupted', scope: 'baseline', reason: 'the run was interrupted before the call could be judged' }
    : pre.blocked
      ? { effect: 'deny', rule: 'hook.PreToolUse', scope: 'hook', reason: pre.reason }
      : null;
  if (hookVerdict) {
    emit({ type: 'decision', step, id: use.id, tool: use.name, ...hookVerdict, commands: [], paths: [] });
    return refuse(hookVerdict, ledger.denied);
  }

  const tool = parsed.tool;
  let verdict: Verdict | undefined;
  let decision: Decision;
  try {
    verdict = await gate.guard.decide(tool.name, parsed.input);
    decision = verdict.decision;
  } catch (error) {
    // A guard that cannot decide never lets the call through.
    const message = error instanceof Error ? error.message : String(error);
    decision = { effect: 'deny', rule: 'baseline.guard-error', scope: 'baseline', reason: `the guard could not decide: ${message}` };
  }
  if (pre.ask !== undefined && decision.effect === 'allow') {
    // A hook that answers "ask" tightens an allow; it never loosens a deny.
    decision = { effect: 'ask', rule: 'hook.PreToolUse', scope: 'hook', reason: pre.ask };
  }
  const facts = decisionFacts(verdict);
  emit({ type: 'decision', step, id: use.id, tool: use.name, ...decision, ...facts });
  if (decision.effect === 'deny') return refuse(decision, ledger.denied);
  if (decision.effect === 'ask') {
    const answer = await askApprover(gate, use, step, decision, verdict, context.signal);
    emit({ type: 'approval', step, id: use.id, tool: use.name, rule: decision.rule, approved: answer.approved, by: answer.by, ...('scope' in answer ? { for: answer.scope } : {}) });
    const record = { answer: answerName(answer) };
    if (!answer.approved) return refuse(decision, ledger.asked, record);
    ledger.asked.push({ step, tool: use.name, ...decision, call: describe(use.name, use.input), ...record });
  }

  ledger.streak.noteAllowed();
  if (context.signal.aborted) return finish({ content: 'The run was interrupted; the call was not run.', isError: true });
  let output: ToolOutput;
  try {
    output = await tool.execute(parsed.input, verdict !== undefined && staysInProcessGroup(verdict.facts) ? { ...context, staysInGroup: true } : context);
  } catch (error) {
    output = { content: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`, isError: true };
  }
  const post = await hooks('PostToolUse', { tool_name: use.name, tool_input: use.input, tool_response: { output: output.content, is_error: output.isError } });
  if (post.blocked) output = { ...output, content: `${output.content}\n\n[PostToolUse hook] ${post.reason}` };
  return finish(output);
}

/** Runs the hooks of one event, records each in the trace, and reports the broken ones. */
export async function runGateHooks(gate: CallGate, event: HookEvent, payload: HookPayload, signal: AbortSignal, emit: EmitEvent, step: number): Promise<HookOutcome> {
  if (!hasHooksFor(gate.hooks, event, payload.tool_name)) return { blocked: false, reason: '', runs: [] };
  const changed = gate.changedHookScript();
  if (changed !== null) {
    // Fail closed: a hook whose script was changed under it decides nothing, so it blocks.
    const reason = `the hook script ${changed} changed during the run; corral no longer runs it and blocks what it would have judged`;
    emit({ type: 'hook', step, event, command: changed, exitCode: null, timedOut: false, durationMs: 0, blocked: true, stderr: reason });
    return { blocked: true, reason, runs: [] };
  }
  const outcome = await runHooks(gate.hooks, event, payload, gate.hookSite(signal));
  for (const run of outcome.runs) {
    emit({ type: 'hook', step, event, command: run.command, exitCode: run.exitCode, timedOut: run.timedOut, durationMs: run.durationMs, blocked: run.exitCode === 2, stderr: run.stderr.slice(0, 2000) });
    if (run.exitCode !== 0 && run.exitCode !== 2 && !signal.aborted) {
      gate.onBrokenHook(event, run.command, run.timedOut ? 'timed out and was killed' : run.exitCode === null ? 'could not run' : `exited ${run.exitCode}`);
    }
  }
  return outcome;
}

async function askApprover(gate: CallGate, use: ToolUse, step: number, decision: Decision, verdict: Verdict | undefined, signal: AbortSignal): Promise<ApprovalAnswer> {
  const input = (use.input !== null && typeof use.input === 'object' ? use.input : {}) as Record<string, unknown>;
  try {
    return await gate.approver.ask(
      {
        ticketId: gate.ticketId,
        step,
        tool: use.name,
        input,
        decision,
        commands: verdict?.facts.commands.map((command) => command.argv) ?? [],
        paths: verdict?.facts.paths.flatMap((fact) => (fact.path === null ? [] : [fact.path])) ?? [],
        worktree: gate.worktree,
      },
      signal,
    );
  } catch {
    // An approver that fails (the terminal went away) never approves.
    return { approved: false, by: 'person' };
  }
}

function answerName(answer: ApprovalAnswer): NonNullable<CallRecord['answer']> {
  if (answer.by === 'remembered') return 'remembered';
  if (answer.approved) return answer.scope === 'run' ? 'always' : 'yes';
  return answer.by === 'person' ? 'no' : answer.by;
}

/** The parsed commands and resolved paths a decision was made from, as the trace records them. */
function decisionFacts(verdict: Verdict | undefined): { commands: string[][]; paths: string[] } {
  if (verdict === undefined) return { commands: [], paths: [] };
  return {
    commands: verdict.facts.commands.map((command) => command.argv),
    paths: verdict.facts.paths.map((fact) => `${fact.access} ${fact.path ?? `${fact.given} (unknown)`}`),
  };
}

