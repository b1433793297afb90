import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { InternalError } from '../errors.js';
import type { ToolOutput, ToolUse } from '../agent/loop.js';
import type { Approver, ApprovalAnswer } from '../guard/approval/approver.js';
import type { Guard, Verdict } from '../guard/guard.js';
import { hasHooksFor, hookCouldNotStart, runHooks, type HookOutcome, type HookPayload, type HookSite } from '../guard/hooks.js';
import { staysInProcessGroup } from '../guard/process-group.js';
import { refusalText } from '../guard/refusal.js';
import type { HookEvent, HooksConfig } from '../policy/hooks-schema.js';
import type { Decision } from '../policy/types.js';
import { parseToolCall } from '../tools/index.js';
import type { ToolContext, ToolDefinition, ToolOutput as ToolResultOutput } from '../tools/types.js';
import type { EmitEvent } from '../trace/events.js';
import { traceOutput } from '../trace/write.js';
import { redactSecrets, type Redactor } from '../text/redact.js';
import type { BuiltInRule } from '../policy/rule-ids.js';

// One tool call from the model's request to its result, in numbered phases over a call
// that carries its own state (as gemini-cli's scheduler does): 1 validate, 2 pre-hooks,
// 3 judge, 4 approve, 5 execute, 6 post-hooks. A phase that refuses the call ends it;
// every event of a call is written by `note`, and nowhere else.

/** A call judged: the decision and the facts it was made from, and the tool and validated input when it is a valid call. */
export interface JudgedCall {
  verdict: Verdict;
  valid?: ValidCall;
  /** What the model is told about a call that is not valid. */
  invalid?: string;
}

/**
 * Parse → facts → decide: the one way a call is judged, by a run, `replay`, `explain`
 * and `policy test` alike. A call naming no tool or not fitting its tool's schema never
 * reaches the guard; a guard that cannot decide denies.
 */
export async function judgeCall(guard: Guard, name: string, rawInput: unknown, cwd?: string): Promise<JudgedCall> {
  const checked = validateCall(name, rawInput);
  return 'verdict' in checked ? checked : judgeValidCall(guard, checked, cwd);
}

/** A call that fits its tool: the tool, and the input its schema gave back. */
export interface ValidCall {
  tool: ToolDefinition<any>;
  input: Record<string, unknown>;
}

/** The valid call, or the denial of one that names no tool or does not fit its tool's schema. */
export function validateCall(name: string, rawInput: unknown): ValidCall | JudgedCall {
  const parsed = parseToolCall(name, rawInput);
  if (parsed.ok) return { tool: parsed.tool, input: parsed.input as Record<string, unknown> };
  const rule: BuiltInRule = parsed.unknown ? 'baseline.unknown-tool' : 'tool.invalid-call';
  return { verdict: { decision: { effect: 'deny', rule, scope: 'baseline', reason: parsed.error }, facts: noFacts(name, rawInput) }, invalid: parsed.error };
}

async function judgeValidCall(guard: Guard, valid: ValidCall, cwd?: string): Promise<JudgedCall> {
  const { tool, input } = valid;
  const base = cwd === undefined ? guard.worktree : path.resolve(guard.worktree, cwd);
  try {
    const verdict = await guard.decide({ tool: tool.name, kind: tool.kind, input, locations: tool.locations(input, base), cwd: base });
    return { verdict, valid };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { verdict: { decision: { effect: 'deny', rule: 'baseline.guard-error' satisfies BuiltInRule, scope: 'baseline', reason: `the guard could not decide: ${message}` }, facts: noFacts(tool.name, input) } };
  }
}

function noFacts(tool: string, rawInput: unknown): Verdict['facts'] {
  const input = (rawInput !== null && typeof rawInput === 'object' ? rawInput : {}) as Record<string, unknown>;
  return { tool, input, commands: [], paths: [], problems: [] };
}

/** What a pipeline needs from its run, made once. */
export interface PipelineSite {
  guard: Guard;
  approver: Approver;
  hooks: HooksConfig | undefined;
  /** Where hooks run, for a call that may be interrupted by `signal`. */
  hookSite(signal: AbortSignal): HookSite;
  ticketId: string;
  /** A hook script (relative path) whose content changed since the run started, or null. */
  changedHookScript(): string | null;
  /** Hooks that failed without blocking (an exit code other than 0 and 2, a timeout). */
  onBrokenHook(event: HookEvent, command: string, what: string): void;
  emit: EmitEvent;
  /** The run's redaction, applied to a result's output before the trace's cap; default: key shapes only. */
  redact?: Redactor;
}

/** One call on its way through the phases. */
interface Call {
  step: number;
  use: ToolUse;
  signal: AbortSignal;
  valid?: ValidCall;
  started: number;
  judged?: JudgedCall;
  /** Set by the phase that decided; an ask stays an ask until the approver answers. */
  decision?: Decision;
  /** A PreToolUse hook's "ask", which tightens an allow. */
  hookAsk?: string;
  /** The input a PreToolUse hook's `updatedInput` gave, validated: what runs, once judged again. */
  updated?: ValidCall;
  /** The facts of what runs (the rewrite's, when a hook rewrote the call), for the approver and the process group. */
  runFacts?: Verdict['facts'];
  /** What hooks handed the model with `additionalContext`, added to the call's result. */
  context: { event: HookEvent; text: string }[];
  answer?: ApprovalAnswer;
  output?: ToolResultOutput;
  /** Refused or cut short: no later phase runs. */
  ended?: boolean;
}

type Phase = (call: Call, context: ToolContext) => Promise<void>;

export interface CallPipeline {
  run(use: ToolUse, step: number, context: ToolContext): Promise<ToolOutput>;
  /**
   * Judges a call an agent CLI runs itself: validate, PreToolUse hooks, the guard, the
   * approver (phases 1-4), each with its events; nothing runs. Refused, `reason` is what
   * the model is told (the rule and why).
   */
  decide(use: ToolUse, step: number, signal: AbortSignal): Promise<{ allowed: boolean; reason: string; decision?: Decision }>;
  /** Runs the hooks of an event outside a call (Stop). */
  hooks(event: HookEvent, payload: HookPayload, signal: AbortSignal, step: number): Promise<HookOutcome>;
  /** Denied or refused calls in a row; an allowed call resets it, an invalid one (a model's slip) counts neither way. */
  readonly refusalsInARow: number;
  /** Why a hook answered `continue: false` during a call, once one has: the run ends, blocked. */
  readonly halted: string | undefined;
}

export function createCallPipeline(site: PipelineSite): CallPipeline {
  const { emit } = site;
  let refusalsInARow = 0;
  let halted: string | undefined;

  const hooks = async (event: HookEvent, payload: HookPayload, signal: AbortSignal, step: number): Promise<HookOutcome> => {
    if (!hasHooksFor(site.hooks, event, payload.tool_name)) return { blocked: false, reason: '', runs: [] };
    const changed = site.changedHookScript();
    if (changed !== null) {
      // Fail closed: a hook whose script was changed under it decides nothing, so it blocks.
      const reason = `the hook script ${changed} changed during the run; corral no longer runs it and blocks what it would have judged`;
      emit({ type: 'hook', step, event, command: changed, exitCode: null, timedOut: false, durationMs: 0, blocked: true, stderr: reason });
      return { blocked: true, reason, runs: [] };
    }
    const outcome = await runHooks(site.hooks, event, payload, site.hookSite(signal));
    for (const run of outcome.runs) {
      const said = { ...(run.updatedInput !== undefined ? { updatedInput: run.updatedInput } : {}), ...(run.context !== undefined ? { additionalContext: run.context } : {}), ...(run.halt !== undefined ? { stopReason: run.halt } : {}) };
      const failedClosed = outcome.blocked && run === outcome.runs.at(-1) && event === 'PreToolUse' && hookCouldNotStart(run);
      // Redacted before it is cut: a secret cut in two could no longer be found by the trace writer.
      emit({ type: 'hook', step, event, command: run.command, exitCode: run.exitCode, timedOut: run.timedOut, durationMs: run.durationMs, blocked: run.exitCode === 2 || failedClosed, stderr: (site.redact ?? redactSecrets)(run.stderr).slice(0, 2000), ...said });
      // A hook that failed closed denied the call, and the denial says why: no warning on top.
      if (run.exitCode !== 0 && run.exitCode !== 2 && !signal.aborted && !failedClosed) {
        site.onBrokenHook(event, run.command, run.timedOut ? 'timed out and was killed' : run.exitCode === null ? 'could not run' : `exited ${run.exitCode}`);
      }
    }
    // The hook's command is in its trace event; the reason says what it said.
    const stopper = outcome.runs.find((run) => run.halt !== undefined);
    if (stopper !== undefined) halted ??= `a ${event} hook stopped the run (continue: false)${stopper.halt ? `: ${stopper.halt}` : ''}`;
    return outcome;
  };

  /** The events of a call, each written when its phase ends. */
  const note = (call: Call, what: 'start' | 'decision' | 'approval' | 'result'): void => {
    const { step, use } = call;
    switch (what) {
      case 'start':
        emit({ type: 'tool_call', step, id: use.id, tool: use.name, input: use.input });
        return;
      case 'decision':
        emit({ type: 'decision', step, id: use.id, tool: use.name, ...call.decision!, ...decisionFacts(call.judged?.verdict) });
        return;
      case 'approval': {
        const answer = call.answer!;
        emit({ type: 'approval', step, id: use.id, tool: use.name, rule: call.decision!.rule, approved: answer.approved, by: answer.by, ...('scope' in answer ? { for: answer.scope } : {}) });
        return;
      }
      case 'result': {
        const output = call.output!;
        const durationMs = Math.round(performance.now() - call.started);
        emit({ type: 'tool_result', step, id: use.id, tool: use.name, isError: output.isError, bytes: Buffer.byteLength(output.content), durationMs, output: traceOutput(output.content, site.redact ?? redactSecrets) });
      }
    }
  };

  /** Ends a call the policy refused: counted, and answered with the verdict. */
  const refuse = (call: Call): void => {
    refusalsInARow += 1;
    call.output = { content: refusalText(call.decision!), isError: true };
    call.ended = true;
  };

  // 1. A call that names no tool or does not fit its schema is a model's slip, not a
  // policy verdict: it is told what to fix, and the streak is left alone.
  const validate: Phase = async (call) => {
    const checked = validateCall(call.use.name, call.use.input);
    if (!('verdict' in checked)) {
      call.valid = checked;
      return;
    }
    const invalid = checked;
    call.judged = invalid;
    call.decision = invalid.verdict.decision;
    note(call, 'decision');
    call.output = { content: invalid.invalid!, isError: true };
    call.ended = true;
  };

  // 2. A hook runs first and can only tighten: passing it still leaves the guard to decide.
  // It sees the validated input with absolute paths; an `updatedInput` it answers is
  // validated here and judged by the guard with the original (phase 3).
  const preHooks: Phase = async (call) => {
    const pre = await hooks('PreToolUse', { tool_name: call.use.name, tool_input: call.valid!.input, tool_use_id: call.use.id }, call.signal, call.step);
    for (const text of pre.context ?? []) call.context.push({ event: 'PreToolUse', text });
    const rule = 'hook.PreToolUse' satisfies BuiltInRule;
    // An interrupt kills a hook before it could block: the call must not run on its silence.
    if (call.signal.aborted) call.decision = { effect: 'deny', rule: 'run.interrupted' satisfies BuiltInRule, scope: 'baseline', reason: 'the run was interrupted before the call could be judged' };
    else if (pre.blocked) call.decision = { effect: 'deny', rule, scope: 'hook', reason: pre.reason };
    else {
      if (pre.ask !== undefined) call.hookAsk = pre.ask;
      if (pre.updatedInput !== undefined) {
        const checked = validateCall(call.use.name, pre.updatedInput);
        if ('verdict' in checked) call.decision = { effect: 'deny', rule, scope: 'hook', reason: `the PreToolUse hook's updatedInput is not a valid ${call.use.name} call: ${checked.invalid ?? checked.verdict.decision.reason}` };
        else call.updated = checked;
      }
    }
    if (call.decision === undefined) return;
    note(call, 'decision');
    refuse(call);
  };

  // 3. The guard, through the one judge every command shares.
  const judge: Phase = async (call) => {
    call.judged = await judgeValidCall(site.guard, call.valid!);
    if (call.updated !== undefined) {
      // A hook's rewrite is judged like the model's call, and never loosens it: the
      // stricter verdict of the two stands (a deny stays a deny), and what runs is the rewrite.
      const rewritten = await judgeValidCall(site.guard, call.updated);
      const stricter = STRICTNESS[call.judged.verdict.decision.effect] > STRICTNESS[rewritten.verdict.decision.effect] ? call.judged : rewritten;
      call.judged = { verdict: stricter.verdict, ...(rewritten.valid ? { valid: rewritten.valid } : {}) };
      call.runFacts = rewritten.verdict.facts;
    }
    let decision = call.judged.verdict.decision;
    // A hook that answers "ask" tightens an allow; it never loosens a deny.
    if (call.hookAsk !== undefined && decision.effect === 'allow') decision = { effect: 'ask', rule: 'hook.PreToolUse' satisfies BuiltInRule, scope: 'hook', reason: call.hookAsk };
    call.decision = decision;
    note(call, 'decision');
    if (decision.effect === 'deny') refuse(call);
  };

  // 4. An ask goes to the approver, with the validated input.
  const approve: Phase = async (call) => {
    if (call.decision!.effect !== 'ask') return;
    call.answer = await askApprover(site, call);
    note(call, 'approval');
    if (!call.answer.approved) refuse(call);
  };

  // 5. Only now does anything run.
  const execute: Phase = async (call, context) => {
    refusalsInARow = 0;
    if (call.signal.aborted) {
      call.output = { content: 'The run was interrupted; the call was not run.', isError: true };
      call.ended = true;
      return;
    }
    const valid = call.judged!.valid;
    if (valid === undefined) {
      call.output = { content: 'The call could not be judged; it was not run.', isError: true };
      call.ended = true;
      return;
    }
    const { tool, input } = valid;
    const facts = call.runFacts ?? call.judged!.verdict.facts;
    try {
      call.output = await tool.execute(input, staysInProcessGroup(facts) ? { ...context, staysInGroup: true } : context);
    } catch (error) {
      // A broken harness (the run's sandbox supervisor died) is the run's failure, not the model's to work around.
      if (error instanceof InternalError) throw error;
      call.output = { content: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`, isError: true };
    }
  };

  // 6. PostToolUse hooks see the result in the tool's own shape; a blocking one adds its
  // feedback to it.
  const postHooks: Phase = async (call) => {
    const output = call.output!;
    const input = call.judged?.valid?.input ?? call.valid!.input;
    const response = output.response ?? { error: output.content };
    const post = await hooks('PostToolUse', { tool_name: call.use.name, tool_input: input, tool_use_id: call.use.id, tool_response: response }, call.signal, call.step);
    for (const text of post.context ?? []) call.context.push({ event: 'PostToolUse', text });
    if (post.blocked) call.output = { ...output, content: `${output.content}\n\n[PostToolUse hook] ${post.reason}` };
  };

  const PHASES: readonly Phase[] = [validate, preHooks, judge, approve, execute, postHooks];
  // What an agent CLI asks: the call is judged here and run by the agent.
  const JUDGING_PHASES: readonly Phase[] = [validate, preHooks, judge, approve];

  return {
    async run(use, step, context) {
      const call: Call = { step, use, signal: context.signal, started: performance.now(), context: [] };
      note(call, 'start');
      for (const phase of PHASES) {
        await phase(call, context);
        if (call.ended) break;
      }
      // The hooks' additionalContext goes to the model with the result, as Claude Code hands it on.
      if (call.context.length > 0) {
        const added = call.context.map(({ event, text }) => `[${event} hook context] ${text}`).join('\n\n');
        call.output = { ...call.output!, content: `${call.output!.content}\n\n${added}` };
      }
      note(call, 'result');
      const decision = call.decision;
      const verdict = decision === undefined ? undefined : { effect: decision.effect, rule: decision.rule, ...(call.answer !== undefined ? { approved: call.answer.approved } : {}) };
      return { content: call.output!.content, isError: call.output!.isError, ...(verdict ? { verdict } : {}) };
    },
    async decide(use, step, signal) {
      const call: Call = { step, use, signal, started: performance.now(), context: [] };
      note(call, 'start');
      for (const phase of JUDGING_PHASES) {
        await phase(call, undefined as never);
        if (call.ended) break;
      }
      const decision = call.decision;
      if (call.ended || decision === undefined) return { allowed: false, reason: call.output?.content ?? 'The call could not be judged; it was not run.', ...(decision ? { decision } : {}) };
      refusalsInARow = 0;
      const by = decision.effect === 'ask' ? `approved (rule ${decision.rule})` : `rule ${decision.rule} (${decision.scope})`;
      return { allowed: true, reason: `corral allowed it: ${by}: ${decision.reason}`, decision };
    },
    hooks,
    get refusalsInARow() {
      return refusalsInARow;
    },
    get halted() {
      return halted;
    },
  };
}

async function askApprover(site: PipelineSite, call: Call): Promise<ApprovalAnswer> {
  // A person approves what would run: a hook's rewrite, when there is one.
  const facts = call.runFacts ?? call.judged!.verdict.facts;
  try {
    return await site.approver.ask(
      {
        ticketId: site.ticketId,
        step: call.step,
        tool: call.use.name,
        input: call.judged!.valid!.input,
        decision: call.decision!,
        commands: facts.commands.map((command) => command.argv),
        paths: facts.paths.flatMap((fact) => (fact.path === null ? [] : [fact.path])),
        worktree: site.guard.worktree,
      },
      call.signal,
    );
  } catch {
    // An approver that fails (the terminal went away) never approves.
    return { approved: false, by: 'person' };
  }
}

/** How strict each effect is: the stricter of two verdicts on one call stands. */
const STRICTNESS: Record<Decision['effect'], number> = { allow: 0, ask: 1, deny: 2 };

/** The parsed commands and resolved paths a decision was made from, as the trace records them. */
function decisionFacts(verdict: Verdict | undefined): { commands: string[][]; paths: string[] } {
  if (verdict === undefined) return { commands: [], paths: [] };
  return {
    commands: verdict.facts.commands.map((command) => command.argv),
    paths: verdict.facts.paths.map((fact) => `${fact.access} ${fact.path ?? `${fact.given} (unknown)`}`),
  };
}
