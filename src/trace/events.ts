import { z } from 'zod';
import type { Change, FenceVerdict, TokenUsage, TurnBlock } from './records.js';
import { RUN_STATUSES } from './outcome.js';

// The events of a run as one schema: the writer's type, the reader's validation and the
// docs' table (docs/trace.md) are this file. A field is added here or nowhere.

const Effect = z.enum(['allow', 'ask', 'deny']);

const Usage = z.object({ inputTokens: z.number(), outputTokens: z.number(), cacheReadTokens: z.number(), cacheWriteTokens: z.number() });

const Block = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  // A tool_use without an id could not be answered, so no model turn holds one.
  z.object({ type: z.literal('tool_use'), id: z.string().min(1), name: z.string().min(1), input: z.unknown() }),
]);

const ChangeSchema = z.object({
  kind: z.enum(['added', 'modified', 'deleted', 'renamed', 'mode', 'type']),
  path: z.string(),
  from: z.string().optional(),
});

const Verdict = z.object({ change: ChangeSchema, allowed: z.boolean(), reason: z.string().optional() });

const TicketRef = z.object({ id: z.string(), file: z.string(), title: z.string().optional() });

/** Fields of a rule's verdict, shared by a tool call's `decision` and the `run_gate`. */
const decided = { effect: Effect, rule: z.string(), scope: z.string(), reason: z.string(), source: z.string().optional() };

/** One event's schema: its `type` and its fields. */
function event<const T extends string, S extends z.ZodRawShape>(type: T, shape: S) {
  return z.object({ type: z.literal(type), ...shape });
}

// One object schema a `type`, in the order a run writes them.
const EVENT_SCHEMAS = [
  event('run_start', {
    runId: z.string(),
    ticket: TicketRef,
    model: z.string(),
    runDir: z.string(),
    corral: z.string(),
    configDigest: z.string(),
    // Optional only so that traces written before they were added still read.
    /** The commit the run starts from. */
    baseCommit: z.string().optional(),
    /** This trace file. */
    trace: z.string().optional(),
  }),
  event('run_gate', { ...decided, approved: z.boolean().optional() }),
  /** The repository's AGENTS.md and CLAUDE.md files the system prompt carries (older traces have none). */
  event('instructions', {
    files: z.array(z.object({ path: z.string(), bytes: z.number(), cut: z.boolean() })),
    /** Found, but left out whole: the size bound was reached before them. */
    omitted: z.array(z.string()),
    /** The ticket turned them off (`instructions: false`). */
    off: z.boolean().optional(),
  }),
  event('worktree', {
    dir: z.string(),
    baseCommit: z.string(),
    /** What the host checkout held beyond its HEAD as the run began; `inRun`: the run started from it (--from-worktree). */
    hostUncommitted: z.object({ modified: z.number(), staged: z.number(), untracked: z.number(), inRun: z.boolean() }).optional(),
  }),
  event('sandbox', {
    kind: z.enum(['bwrap', 'none']),
    network: z.boolean(),
    /** Whether setup commands had the network (only when the ticket has setup). */
    setupNetwork: z.boolean().optional(),
    /** Without bubblewrap: the child subreaper that ends a command's processes, or none. */
    reaper: z.enum(['perl', 'python3', 'none']).optional(),
    /** With bubblewrap: each command ran in a bubblewrap of its own (`sandbox.per_command`, or no supervisor could run); absent, one per run with a supervisor. */
    perCommand: z.literal(true).optional(),
    warning: z.string().optional(),
  }),
  event('secrets_masked', { masked: z.array(z.string()), exposed: z.array(z.string()) }),
  event('setup', { name: z.string(), exitCode: z.number().nullable(), timedOut: z.boolean(), durationMs: z.number(), output: z.string() }),
  event('policy', { rules: z.array(z.object({ id: z.string(), effect: z.string(), scope: z.string() })), defaultEffect: z.string() }),
  /**
   * Old tool results were replaced by a placeholder before this step's request, to keep the
   * conversation within the model's context window (`tokens*`: corral's estimate of the prompt).
   */
  event('context_cleared', { step: z.number(), results: z.number(), bytesBefore: z.number(), bytesAfter: z.number(), tokensBefore: z.number(), tokensAfter: z.number(), window: z.number() }),
  /** Older turns were replaced by one summary message (`summary`, as the model got it) before this step's request. */
  event('context_compacted', { step: z.number(), turns: z.number(), bytesBefore: z.number(), bytesAfter: z.number(), tokensBefore: z.number(), tokensAfter: z.number(), summary: z.string() }),
  /** The ticket runs under an agent CLI (docs/agents.md): which, where, its version; each session it started or resumed. */
  event('agent', { kind: z.enum(['claude-code', 'codex']), cli: z.string(), version: z.string(), sessionId: z.string().optional() }),
  event('model_request', { step: z.number(), messages: z.number(), bytes: z.number() }),
  event('model_response', {
    step: z.number(),
    stopReason: z.string().min(1),
    usage: Usage,
    content: z.array(Block),
    durationMs: z.number(),
    /** What the turn cost in US dollars, priced as the run priced it; null when it could not be priced. */
    costUsd: z.number().nullable().optional(),
  }),
  event('tool_call', { step: z.number(), id: z.string(), tool: z.string(), input: z.unknown() }),
  event('hook', {
    step: z.number(),
    event: z.string(),
    command: z.string(),
    exitCode: z.number().nullable(),
    timedOut: z.boolean(),
    durationMs: z.number(),
    blocked: z.boolean(),
    stderr: z.string(),
    /** The whole new input a PreToolUse hook answered with; the call's own input stays on `tool_call`. */
    updatedInput: z.unknown().optional(),
    /** What the hook handed the model with the call's result. */
    additionalContext: z.string().optional(),
    /** The hook answered `continue: false`, with this reason ('' without one): the run ended. */
    stopReason: z.string().optional(),
  }),
  event('decision', { step: z.number(), id: z.string(), tool: z.string(), ...decided, commands: z.array(z.array(z.string())), paths: z.array(z.string()) }),
  event('approval', {
    step: z.number(),
    id: z.string(),
    tool: z.string(),
    rule: z.string(),
    approved: z.boolean(),
    by: z.enum(['person', 'remembered', 'unattended', 'interrupted']),
    for: z.enum(['once', 'run']).optional(),
  }),
  event('tool_result', {
    step: z.number(),
    id: z.string(),
    tool: z.string(),
    isError: z.boolean(),
    /** The size of the whole output the model got. */
    bytes: z.number(),
    durationMs: z.number(),
    /** The output, redacted and capped (TRACE_OUTPUT_CAP). Optional only so that traces written before it was added still read. */
    output: z.string().optional(),
  }),
  event('check', {
    round: z.number(),
    name: z.string(),
    passed: z.boolean(),
    exitCode: z.number().nullable(),
    durationMs: z.number(),
    output: z.string(),
    // Optional only so that traces written before they were added still read.
    command: z.string().optional(),
    timedOut: z.boolean().optional(),
  }),
  /** A round of checks ended (one with no check at all passes). */
  event('check_round', { round: z.number(), passed: z.boolean() }),
  event('fence', { ok: z.boolean(), verdicts: z.array(Verdict) }),
  event('host', { ok: z.boolean(), differences: z.array(z.string()) }),
  /** Where the run's work and records were kept. */
  event('kept', {
    patch: z.string().optional(),
    branch: z.string().optional(),
    /** The worktree, when it stays (`--keep`, or a patch that could not be written). */
    worktree: z.string().optional(),
    /** The refused asks, written as rules for a person to review. */
    approvalsNeeded: z.string().optional(),
  }),
  /** Something a person should know about the run that did not change its outcome. */
  event('warning', { message: z.string() }),
  event('end', {
    status: z.enum(RUN_STATUSES),
    exitCode: z.number(),
    reason: z.string(),
    durationMs: z.number().optional(),
    /** Which budget ran out, when status is budget_exhausted. */
    budget: z.enum(['steps', 'tokens', 'minutes', 'usd']).optional(),
  }),
] as const;

/** What the writer puts around every event (docs/trace.md, "Every line"). */
const Envelope = z.object({
  v: z.number(),
  seq: z.number(),
  time: z.string(),
  run: z.string(),
  /** The ticket id; `run_start` has its own ticket object in its place. */
  ticket: z.string(),
  /** The model turn the line belongs to; 0 before the first model request. */
  step: z.number(),
});

/** A run's event, as emitted. */
export const RunEventSchema = z.discriminatedUnion('type', EVENT_SCHEMAS);

/** What happens during one run, in order. Reporters, the trace writer and the fold consume these. */
export type RunEvent = z.infer<typeof RunEventSchema>;
/** The event of one type. */
export type EventOf<K extends RunEvent['type']> = Extract<RunEvent, { type: K }>;
type Envelope = z.infer<typeof Envelope>;
/** One line of a trace as read back: the writer's envelope (v, seq, time, run, ticket, step) around a RunEvent. */
export type TraceLine = RunEvent extends infer E ? (E extends RunEvent ? Omit<Envelope, keyof E> & E : never) : never;

/** Every event type, in the order a run writes them. */
export const EVENT_TYPES: readonly RunEvent['type'][] = EVENT_SCHEMAS.map((schema) => schema.shape.type.value);

/** One line of a trace file: each event's schema with the envelope's fields (an event's own field wins). */
export const TraceLineSchema = z.discriminatedUnion(
  'type',
  EVENT_SCHEMAS.map((schema) => Envelope.extend(schema.shape)) as unknown as [z.ZodObject, ...z.ZodObject[]],
) as unknown as z.ZodType<TraceLine>;

// The records' hand-written types and the schema must not drift apart: each is checked
// against the other at compile time.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameShapes: [Same<z.infer<typeof Usage>, TokenUsage>, Same<z.infer<typeof Block>, TurnBlock>, Same<z.infer<typeof ChangeSchema>, Change>, Same<z.infer<typeof Verdict>, FenceVerdict>] = [true, true, true, true];
void sameShapes;

export type EmitEvent = (event: RunEvent) => void;
