import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BudgetMeter } from '../agent/budget.js';
import { DEFAULT_MODEL, isReplayModel, prepareModel } from '../agent/create-model.js';
import { runAgentLoop, type LoopOutcome } from '../agent/loop.js';
import { buildSystemPrompt, buildTaskMessage } from '../agent/system-prompt.js';
import { costUsd, priceOf } from '../agent/prices.js';
import { UsageError } from '../errors.js';
import { fanOut, type EmitEvent } from '../report/events.js';
import { createTraceWriter } from '../report/trace.js';
import type { Ticket } from '../ticket/types.js';
import { toolSpecs } from '../tools/index.js';
import type { ToolContext } from '../tools/types.js';
import { listChanges, snapshotWorktree } from '../workspace/changes.js';
import { checkFence, type FenceResult } from '../workspace/fence.js';
import { resolveCommit } from '../workspace/git.js';
import { commitToBranch, writePatch } from '../workspace/keep.js';
import { createWorktree, removeWorktree, type Worktree } from '../workspace/worktree.js';
import { formatCheckFeedback, runChecks, runTicketCommand, type CommandSite } from './checks.js';
import { exitCodeOf, extractFollowUps, type CheckResult, type RunResult, type RunStatus } from './result.js';
import { runToolCall, type ToolCallLedger } from './tool-call.js';
import { buildToolEnv } from './tool-env.js';

export interface RunOptions {
  /** Keep the worktree after the run and say where it is. */
  keep: boolean;
  /** A model id or `replay:<absolute path>` that overrides the ticket's. */
  model?: string;
  /** Where run directories go; default `<repo>/.corral/runs`. */
  runsDir?: string;
  /** Aborted when the user interrupts. */
  interrupt: AbortSignal;
  onEvent?: EmitEvent;
  /** The host process environment (API key for the model; pass-through names for tools). */
  env: NodeJS.ProcessEnv;
  /** Shown paths are relative to this directory. */
  cwd: string;
  now?: () => number;
}

const OUTPUT_CAP = 30_000;
/** Denied or refused calls in a row after which the run stops as blocked (exit 4). */
const MAX_REFUSED_IN_A_ROW = 5;
const MAX_TOKENS = 8_192;

/** Refuses ticket settings this version cannot enforce, rather than ignoring them (fail closed). */
function refuseUnenforceable(ticket: Ticket, shownFile: string): void {
  const problems: string[] = [];
  const policy = ticket.policy;
  const hasRules = policy !== undefined && policy !== null && (Array.isArray(policy) ? policy.length > 0 : Object.keys(policy as object).length > 0);
  if (hasRules) problems.push('policy: ticket rules need the guard, which this version of corral does not have yet; remove them or wait for it');
  if (ticket.sandbox === 'bwrap') problems.push('sandbox: bwrap is not supported by this version of corral yet; use `sandbox: auto` or `none`');
  if (problems.length > 0) throw new UsageError(`${shownFile}: ${problems.join('; ')}`);
}

export function makeRunId(ticketId: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').replace('T', '-');
  return `${ticketId}-${stamp}-${randomBytes(2).toString('hex')}`;
}

/** One ticket end to end: model → worktree → setup → loop → checks → fence → patch/branch → result. */
export async function runTicket(ticket: Ticket, options: RunOptions): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const shownFile = path.relative(options.cwd, ticket.file) || ticket.file;
  refuseUnenforceable(ticket, shownFile);
  const modelId = options.model ?? ticket.model ?? DEFAULT_MODEL;
  if (ticket.budget.usd !== undefined && !isReplayModel(modelId) && priceOf(modelId) === null) {
    throw new UsageError(`${shownFile}: budget.usd is set, but corral has no price for model ${modelId}, so the dollar budget cannot be enforced`);
  }
  const model = await prepareModel(modelId, options.env, options.cwd);
  const baseCommit = await resolveCommit(ticket.repo, ticket.base);
  if (!baseCommit) throw new UsageError(`${shownFile}: base ${ticket.base} does not resolve to a commit in ${ticket.repo}`);

  const runId = makeRunId(ticket.id, startedAt);
  const runsDir = options.runsDir ?? path.join(ticket.repo, '.corral', 'runs');
  const runDir = path.join(runsDir, runId);
  await mkdir(runDir, { recursive: true });
  if (!options.runsDir) await writeFile(path.join(ticket.repo, '.corral', '.gitignore'), '# run records of corral; never committed\n*\n');
  const traceFile = path.join(runDir, 'trace.jsonl');
  const emit = fanOut(createTraceWriter(traceFile, runId, ticket.id, now), options.onEvent ?? (() => undefined));
  const ticketRef = { id: ticket.id, file: ticket.file, ...(ticket.title ? { title: ticket.title } : {}) };
  emit({ type: 'run_start', runId, ticket: ticketRef, model: modelId, runDir });

  const warnings: string[] = [];
  if (ticket.sandbox === 'auto') warnings.push('sandbox: none (this version has no sandbox yet); commands run unconfined');

  const meter = new BudgetMeter(ticket.budget, startedAt, now);
  const ledger: ToolCallLedger = { calls: 0, denied: [], asked: [], refusedInARow: 0 };
  let lastChecks: CheckResult[] = [];
  let checkRoundsUsed = 0;
  let outcome: Outcome;
  let worktree: Worktree | undefined;
  let tempDir: string | undefined;
  let fence: FenceResult = { ok: true, verdicts: [] };
  let patchFile: string | undefined;
  let branch: string | undefined;
  let status: RunStatus = 'internal_error';
  let reason = '';

  try {
    worktree = await createWorktree(ticket.repo, baseCommit, ticket.id);
    emit({ type: 'worktree', dir: worktree.dir, baseCommit });
    tempDir = await mkdtemp(path.join(tmpdir(), 'corral-tmp-'));
    const env = buildToolEnv(options.env, ticket.env, tempDir);
    const site: CommandSite = { cwd: worktree.dir, env, outputCap: OUTPUT_CAP };

    for (const command of ticket.setup) {
      const result = await runTicketCommand(command, site, options.interrupt);
      emit({ type: 'setup', name: result.name, exitCode: result.exitCode, timedOut: result.timedOut, durationMs: result.durationMs, output: result.output });
      if (options.interrupt.aborted) {
        outcome = { kind: 'interrupted', finalText: '' };
        break;
      }
      if (!result.passed) {
        outcome = { kind: 'setup_failed', reason: `setup command \`${command.run}\` ${result.timedOut ? 'timed out' : `exited ${result.exitCode}`}` };
        break;
      }
    }

    if (!outcome) {
      const worktreeDir = worktree.dir;
      const toolContext = (signal: AbortSignal): ToolContext => ({
        worktree: worktreeDir,
        env,
        signal,
        outputCap: OUTPUT_CAP,
        bashTimeoutMs: 2 * 60_000,
        bashMaxTimeoutMs: 10 * 60_000,
      });
      outcome = await runAgentLoop({
        model,
        system: buildSystemPrompt(ticket),
        taskMessage: buildTaskMessage(ticket),
        tools: toolSpecs(),
        meter,
        maxTokens: MAX_TOKENS,
        checkRounds: ticket.checkRounds,
        interrupt: options.interrupt,
        emit,
        priceTurn: (usage) => (isReplayModel(model.id) ? 0 : costUsd(model.id, usage)),
        runToolCall: (use, step, signal) => runToolCall(use, step, toolContext(signal), emit, ledger),
        blocked: () =>
          ledger.refusedInARow >= MAX_REFUSED_IN_A_ROW
            ? `${ledger.refusedInARow} tool calls in a row were denied or refused; stopping instead of burning the budget`
            : null,
        runChecks: async (round, signal) => {
          checkRoundsUsed = round;
          lastChecks = await runChecks(ticket.checks, site, round, emit, signal);
          const passed = lastChecks.every((c) => c.passed);
          return { passed, feedback: passed ? '' : formatCheckFeedback(lastChecks, round, ticket.checkRounds) };
        },
      });
    }
  } catch (error) {
    outcome = { kind: 'internal_error', reason: error instanceof Error ? error.message : String(error) };
  }

  // Whatever happened, the agent's work is kept as a patch and the fence is read.
  if (worktree) {
    try {
      const snapshot = await snapshotWorktree(worktree);
      try {
        fence = checkFence(await listChanges(snapshot), ticket.allow, ticket.forbid);
        emit({ type: 'fence', ok: fence.ok, verdicts: fence.verdicts });
        patchFile = path.join(runDir, 'patch.diff');
        await writePatch(snapshot, patchFile);
        ({ status, reason } = decideStatus(outcome, fence, ticket));
        if (status === 'passed') {
          const message = `corral: ${ticket.title ?? ticket.id}\n\nTicket: ${ticket.id}\nRun: ${runId}\n`;
          ({ branch } = await commitToBranch(snapshot, `corral/${ticket.id}`, message, runId.slice(ticket.id.length + 1)));
        }
      } finally {
        await snapshot.dispose();
      }
    } catch (error) {
      status = 'internal_error';
      reason = `could not record the result: ${error instanceof Error ? error.message : String(error)}`;
    }
    if (!options.keep) await removeWorktree(worktree);
  } else {
    ({ status, reason } = decideStatus(outcome, fence, ticket));
  }
  if (tempDir) await rm(tempDir, { recursive: true, force: true });

  const exitCode = exitCodeOf(status);
  emit({ type: 'end', status, exitCode, reason });
  const finalText = outcome && 'finalText' in outcome ? outcome.finalText : '';
  return {
    runId,
    ticket: ticketRef,
    status,
    exitCode,
    reason,
    ...(outcome?.kind === 'budget_exhausted' ? { budgetExhausted: outcome.exceeded.which } : {}),
    model: modelId,
    steps: meter.steps,
    usage: meter.usage,
    costUsd: meter.costUsd,
    durationMs: now() - startedAt,
    baseCommit,
    changes: fence.verdicts,
    checks: lastChecks,
    checkRoundsUsed,
    toolCalls: ledger.calls,
    denied: ledger.denied,
    asked: ledger.asked,
    followUps: extractFollowUps(finalText),
    finalText,
    runDir,
    ...(patchFile ? { patch: patchFile } : {}),
    trace: traceFile,
    ...(branch ? { branch } : {}),
    ...(options.keep && worktree ? { worktree: worktree.dir } : {}),
    warnings,
  };
}

type Outcome = LoopOutcome | { kind: 'setup_failed'; reason: string } | { kind: 'internal_error'; reason: string } | undefined;

/** The run's status: a breached fence beats every outcome but an interruption or a bug. */
export function decideStatus(outcome: Outcome, fence: FenceResult, ticket: Pick<Ticket, 'allowEmpty'>): { status: RunStatus; reason: string } {
  if (!outcome) return { status: 'internal_error', reason: 'the run ended before the agent started' };
  if (outcome.kind === 'interrupted') return { status: 'interrupted', reason: 'interrupted' };
  if (outcome.kind === 'internal_error') return { status: 'internal_error', reason: outcome.reason };
  if (!fence.ok) {
    const bad = fence.verdicts.filter((v) => !v.allowed).map((v) => v.change.path);
    return { status: 'fence_violated', reason: `changed ${bad.length} path(s) outside the fence: ${bad.join(', ')}` };
  }
  switch (outcome.kind) {
    case 'setup_failed':
      return { status: 'failed', reason: outcome.reason };
    case 'budget_exhausted':
      return { status: 'budget_exhausted', reason: `budget exhausted: ${outcome.exceeded.which} (${outcome.exceeded.detail})` };
    case 'refused':
      return { status: 'refused', reason: 'the model refused the task' };
    case 'blocked':
      return { status: 'blocked', reason: `blocked by policy: ${outcome.reason}` };
    case 'model_error':
      return { status: 'model_error', reason: `model API failed: ${outcome.message}` };
    case 'checks_failed':
      return { status: 'failed', reason: `checks still failing after ${outcome.rounds} runs (${outcome.rounds - 1} sent back to the agent)` };
    case 'finished':
      if (fence.verdicts.length === 0 && !ticket.allowEmpty) {
        return { status: 'failed', reason: 'the agent changed nothing (set allow_empty: true if that can be a pass)' };
      }
      return { status: 'passed', reason: 'checks passed and the fence held' };
  }
}
