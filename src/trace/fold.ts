import { InternalError } from '../errors.js';
import { describeCall } from '../text/describe-call.js';
import type { EventOf, RunEvent, TraceLine } from './events.js';
import { addUsage, ZERO_USAGE, type FenceVerdict, type TokenUsage } from './records.js';
import { extractFollowUps, type CallRecord, type CheckResult, type RunResult } from './result.js';

// A run's facts folded from its events, one event at a time: the same fold runs live (fed
// each event as the run emits it) and over a trace read back (`corral trace`), so the
// result of a run and the summary of its trace cannot disagree. Pure: no clock, no files.

/** One tool call as its events tell it: the call, the guard's verdict, the answer to an ask, the result. */
export interface FoldedCall {
  id: string;
  step: number;
  tool: string;
  /** A short rendering: `Bash(npm test)`, `Read(src/a.ts)`. */
  call: string;
  decision?: { effect: 'allow' | 'ask' | 'deny'; rule: string; scope: string; reason: string; source?: string };
  approval?: { approved: boolean; by: EventOf<'approval'>['by']; for?: 'once' | 'run' };
  /** `output` when the trace carries it (redacted and capped). */
  result?: { isError: boolean; bytes: number; durationMs: number; output?: string };
}

/** A check of the last round, as its event tells it (`command` and `timedOut` when the event carries them). */
export type FoldedCheck = Omit<EventOf<'check'>, 'type' | 'round'>;

export interface RunFold {
  /** From `run_start`: the run id, ticket, model, run directory, corral version and config digest. */
  start: Omit<EventOf<'run_start'>, 'type'> | null;
  /** A `hook: run.start` rule that decided, and its answer for an ask. */
  gate: Omit<EventOf<'run_gate'>, 'type'> | null;
  /** The instruction files the system prompt carried; null in traces from before they were read. */
  instructions: Omit<EventOf<'instructions'>, 'type'> | null;
  worktree: Omit<EventOf<'worktree'>, 'type'> | null;
  sandbox: Omit<EventOf<'sandbox'>, 'type'> | null;
  /** The agent CLI that worked the ticket (its last session); null for corral's own loop. */
  agent: Omit<EventOf<'agent'>, 'type'> | null;
  secrets: { masked: string[]; exposed: string[] } | null;
  setup: Omit<EventOf<'setup'>, 'type'>[];
  /** Model turns answered. */
  steps: number;
  /** The highest step any event belongs to. */
  lastStep: number;
  usage: TokenUsage;
  /** US dollars, summed turn by turn with the `price` option; null once a turn could not be priced, or with no price. */
  costUsd: number | null;
  /** The model's last non-empty text. */
  finalText: string;
  /** Tool calls started (a call cut at the output limit is answered, never started). */
  toolCalls: number;
  calls: FoldedCall[];
  /** Calls denied by a rule, a hook, an interrupt or as invalid, in order. */
  denied: CallRecord[];
  /** Calls the guard asked about, in order; `answer` is absent while unanswered. */
  asked: CallRecord[];
  hooks: Omit<EventOf<'hook'>, 'type'>[];
  /** The last round of checks run. */
  checks: FoldedCheck[];
  checkRoundsUsed: number;
  fence: { ok: boolean; verdicts: FenceVerdict[] } | null;
  /** What changed in the host repository; null before the `host` event. */
  hostChanges: string[] | null;
  /** How the conversation was kept within the context window: edits made, and what they dropped. */
  context: { clears: number; clearedResults: number; compactions: number; compactedTurns: number };
  /** The run's warnings, each once, in order. */
  warnings: string[];
  /** Where the work and records were kept. */
  kept: Omit<EventOf<'kept'>, 'type'>;
  end: Omit<EventOf<'end'>, 'type'> | null;
  /** Milliseconds since the epoch of the first and last line; null for events without the writer's envelope. */
  firstTime: number | null;
  lastTime: number | null;
}

export interface FoldOptions {
  /** A turn's cost in US dollars, or null when it cannot be priced: the run's own pricing. */
  price?: (usage: TokenUsage, model: string) => number | null;
}

export interface IncrementalFold {
  add(event: RunEvent | TraceLine): void;
  /** The facts so far: a copy, unchanged by later events. */
  current(): RunFold;
}

/** The `answer` of an ask's call record, from its approval. */
function answerOf(approval: { approved: boolean; by: EventOf<'approval'>['by']; for?: 'once' | 'run' }): NonNullable<CallRecord['answer']> {
  if (approval.by === 'remembered') return 'remembered';
  if (approval.approved) return approval.for === 'run' ? 'always' : 'yes';
  return approval.by === 'person' ? 'no' : approval.by;
}

export function createRunFold(options: FoldOptions = {}): IncrementalFold {
  const fold: RunFold = {
    start: null,
    gate: null,
    instructions: null,
    worktree: null,
    sandbox: null,
    agent: null,
    secrets: null,
    setup: [],
    steps: 0,
    lastStep: 0,
    usage: ZERO_USAGE,
    // Nothing spent until a turn is answered; a turn that cannot be priced makes it unknown, not free.
    costUsd: 0,
    finalText: '',
    toolCalls: 0,
    calls: [],
    denied: [],
    asked: [],
    hooks: [],
    checks: [],
    checkRoundsUsed: 0,
    fence: null,
    hostChanges: null,
    context: { clears: 0, clearedResults: 0, compactions: 0, compactedTurns: 0 },
    warnings: [],
    kept: {},
    end: null,
    firstTime: null,
    lastTime: null,
  };
  const calls = new Map<string, FoldedCall>();
  const asks = new Map<string, CallRecord>();
  const callOf = (id: string, step: number, tool: string): FoldedCall => {
    let call = calls.get(id);
    if (call === undefined) {
      // A result or verdict whose call the trace lost (a damaged line): still counted where it belongs.
      call = { id, step, tool, call: `${tool}(…)` };
      calls.set(id, call);
      fold.calls.push(call);
    }
    return call;
  };
  const warn = (warning: string): void => {
    if (!fold.warnings.includes(warning)) fold.warnings.push(warning);
  };

  // Fields are copied one by one, not spread: an event read back carries the writer's
  // envelope (v, seq, time...), which is no fact of the run.
  const add = (event: RunEvent | TraceLine): void => {
    if ('time' in event) {
      const time = Date.parse(event.time);
      if (!Number.isNaN(time)) {
        fold.firstTime ??= time;
        fold.lastTime = time;
      }
    }
    if ('step' in event) fold.lastStep = Math.max(fold.lastStep, event.step);
    switch (event.type) {
      case 'run_start':
        fold.start = {
          runId: event.runId,
          ticket: event.ticket,
          model: event.model,
          runDir: event.runDir,
          corral: event.corral,
          configDigest: event.configDigest,
          ...(event.baseCommit !== undefined ? { baseCommit: event.baseCommit } : {}),
          ...(event.trace !== undefined ? { trace: event.trace } : {}),
        };
        break;
      case 'run_gate':
        fold.gate = { effect: event.effect, rule: event.rule, scope: event.scope, reason: event.reason, ...(event.source !== undefined ? { source: event.source } : {}), ...(event.approved !== undefined ? { approved: event.approved } : {}) };
        break;
      case 'instructions':
        fold.instructions = { files: event.files.map((file) => ({ path: file.path, bytes: file.bytes, cut: file.cut })), omitted: event.omitted, ...(event.off !== undefined ? { off: event.off } : {}) };
        break;
      case 'worktree':
        fold.worktree = { dir: event.dir, baseCommit: event.baseCommit, ...(event.hostUncommitted ? { hostUncommitted: event.hostUncommitted } : {}) };
        break;
      case 'sandbox':
        fold.sandbox = { kind: event.kind, network: event.network, ...(event.reaper ? { reaper: event.reaper } : {}), ...(event.warning !== undefined ? { warning: event.warning } : {}) };
        break;
      case 'secrets_masked':
        fold.secrets = { masked: event.masked, exposed: event.exposed };
        break;
      case 'setup':
        fold.setup.push({ name: event.name, exitCode: event.exitCode, timedOut: event.timedOut, durationMs: event.durationMs, output: event.output });
        break;
      case 'agent':
        fold.agent = { kind: event.kind, cli: event.cli, version: event.version, ...(event.sessionId !== undefined ? { sessionId: event.sessionId } : {}) };
        break;
      case 'policy':
      case 'model_request':
        break;
      case 'context_cleared':
        fold.context.clears += 1;
        fold.context.clearedResults += event.results;
        break;
      case 'context_compacted':
        fold.context.compactions += 1;
        fold.context.compactedTurns += event.turns;
        break;
      case 'model_response': {
        fold.steps += 1;
        fold.usage = addUsage(fold.usage, event.usage);
        // The run's own price when the event carries it; older traces are priced here.
        const cost = event.costUsd !== undefined ? event.costUsd : fold.start && options.price ? options.price(event.usage, fold.start.model) : null;
        fold.costUsd = fold.costUsd === null || cost === null ? null : fold.costUsd + cost;
        const text = event.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('\n').trim();
        if (text) fold.finalText = text;
        break;
      }
      case 'tool_call': {
        fold.toolCalls += 1;
        const call: FoldedCall = { id: event.id, step: event.step, tool: event.tool, call: describeCall(event.tool, event.input) };
        calls.set(event.id, call);
        fold.calls.push(call);
        break;
      }
      case 'decision': {
        const call = callOf(event.id, event.step, event.tool);
        const decision = { effect: event.effect, rule: event.rule, scope: event.scope, reason: event.reason, ...(event.source !== undefined ? { source: event.source } : {}) };
        call.decision = decision;
        if (event.effect === 'allow') break;
        const record: CallRecord = { step: call.step, tool: event.tool, ...decision, call: call.call };
        if (event.effect === 'deny') fold.denied.push(record);
        else {
          fold.asked.push(record);
          asks.set(event.id, record);
        }
        break;
      }
      case 'approval': {
        const approval = { approved: event.approved, by: event.by, ...(event.for ? { for: event.for } : {}) };
        callOf(event.id, event.step, event.tool).approval = approval;
        const asked = asks.get(event.id);
        if (asked) asked.answer = answerOf(approval);
        break;
      }
      case 'hook': {
        const hook = { step: event.step, event: event.event, command: event.command, exitCode: event.exitCode, timedOut: event.timedOut, durationMs: event.durationMs, blocked: event.blocked, stderr: event.stderr };
        fold.hooks.push(hook);
        break;
      }
      case 'tool_result':
        callOf(event.id, event.step, event.tool).result = { isError: event.isError, bytes: event.bytes, durationMs: event.durationMs, ...(event.output !== undefined ? { output: event.output } : {}) };
        break;
      case 'check': {
        // A new round replaces the last one's results: the run reports its last round.
        if (event.round !== fold.checkRoundsUsed) {
          fold.checkRoundsUsed = event.round;
          fold.checks = [];
        }
        fold.checks.push({ name: event.name, passed: event.passed, exitCode: event.exitCode, durationMs: event.durationMs, output: event.output, ...(event.command !== undefined ? { command: event.command } : {}), ...(event.timedOut !== undefined ? { timedOut: event.timedOut } : {}) });
        break;
      }
      case 'check_round':
        if (event.round !== fold.checkRoundsUsed) fold.checks = [];
        fold.checkRoundsUsed = event.round;
        break;
      case 'kept':
        for (const key of ['patch', 'branch', 'worktree', 'approvalsNeeded'] as const) if (event[key] !== undefined) fold.kept[key] = event[key];
        break;
      case 'warning':
        warn(event.message);
        break;
      case 'fence':
        fold.fence = { ok: event.ok, verdicts: event.verdicts };
        break;
      case 'host':
        fold.hostChanges = event.differences;
        break;
      case 'end':
        fold.end = { status: event.status, exitCode: event.exitCode, reason: event.reason, ...(event.durationMs !== undefined ? { durationMs: event.durationMs } : {}), ...(event.budget ? { budget: event.budget } : {}) };
        break;
      default: {
        const unknown: never = event;
        throw new InternalError(`no fold for event ${JSON.stringify(unknown)}`);
      }
    }
  };

  // Without `run_start` the model is unknown, and so is what the run cost.
  return { add, current: () => structuredClone(fold.start ? fold : { ...fold, costUsd: null }) };
}

/** The facts of a run's events, in one pass. */
export function foldRun(events: readonly (RunEvent | TraceLine)[], options: FoldOptions = {}): RunFold {
  const fold = createRunFold(options);
  for (const event of events) fold.add(event);
  return fold.current();
}

/** A run's result from the fold of its events: they must include its `run_start` and `end`. */
export function runResultOf(fold: RunFold): RunResult {
  const { start, end, kept } = fold;
  if (!start || !end) throw new InternalError(`a run's result needs its ${start ? 'end' : 'run_start'} event`);
  const checks = fold.checks.map((check): CheckResult => {
    if (check.command === undefined || check.timedOut === undefined) throw new InternalError(`check ${check.name}: its event carries no command or timedOut`);
    return { name: check.name, command: check.command, passed: check.passed, exitCode: check.exitCode, timedOut: check.timedOut, durationMs: check.durationMs, output: check.output };
  });
  const baseCommit = fold.worktree?.baseCommit ?? start.baseCommit;
  return {
    runId: start.runId,
    ticket: start.ticket,
    status: end.status,
    exitCode: end.exitCode,
    reason: end.reason,
    ...(end.budget ? { budgetExhausted: end.budget } : {}),
    model: start.model,
    steps: fold.steps,
    usage: fold.usage,
    costUsd: fold.costUsd,
    durationMs: end.durationMs ?? 0,
    ...(baseCommit ? { baseCommit } : {}),
    ...(fold.worktree?.hostUncommitted ? { hostUncommitted: fold.worktree.hostUncommitted } : {}),
    changes: fold.fence?.verdicts ?? [],
    ...(fold.hostChanges && fold.hostChanges.length > 0 ? { hostChanges: fold.hostChanges } : {}),
    setup: fold.setup,
    checks,
    checkRoundsUsed: fold.checkRoundsUsed,
    toolCalls: fold.toolCalls,
    denied: fold.denied,
    asked: fold.asked,
    ...(kept.approvalsNeeded ? { approvalsNeeded: kept.approvalsNeeded } : {}),
    followUps: extractFollowUps(fold.finalText),
    finalText: fold.finalText,
    runDir: start.runDir,
    ...(kept.patch ? { patch: kept.patch } : {}),
    trace: start.trace ?? '',
    ...(kept.branch ? { branch: kept.branch } : {}),
    ...(kept.worktree ? { worktree: kept.worktree } : {}),
    ...(fold.sandbox ? { sandbox: fold.sandbox.kind } : {}),
    ...(fold.instructions ? { instructions: fold.instructions.files.map((file) => (file.cut ? `${file.path} (cut)` : file.path)) } : {}),
    warnings: fold.warnings,
  };
}
