import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { rmSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BudgetMeter } from '../agent/budget.js';
import { prepareModel } from '../agent/create-model.js';
import { runAgentLoop, type LoopOutcome } from '../agent/loop.js';
import { isReplayModel } from '../ticket/model-id.js';
import { memoizeReplayLoads, type ReplayLoader } from '../agent/replay-model.js';
import { costUsd } from '../config/prices.js';
import { buildSystemPrompt, buildTaskMessage } from '../agent/system-prompt.js';
import { UsageError } from '../errors.js';
import { fanOut, type EmitEvent } from '../trace/events.js';
import { createRedactor, findAddedSecrets, secretValues, type SecretValue } from '../text/redact.js';
import { createTraceWriter } from '../trace/write.js';
import type { Ticket } from '../ticket/types.js';
import { toolSpecs } from '../tools/index.js';
import type { ToolContext } from '../tools/types.js';
import { listChanges, snapshotWorktree } from '../workspace/changes.js';
import { checkFence, type FenceResult } from '../workspace/fence.js';
import { resolveCommit } from '../git/git.js';
import { commitToBranch, diffSnapshot } from '../workspace/keep.js';
import { createWorktree, releaseWorktree, removeWorktree, runTempDirOf, type Worktree } from '../workspace/worktree.js';
import { hostDifferences, recordHostState, type HostState } from '../workspace/host-integrity.js';
import { trackLeftover } from '../proc/leftovers.js';
import { formatCheckFeedback, runChecks, runTicketCommand, type CommandSite } from './checks.js';
import { modelOf, preflightTicket } from './preflight.js';
import { exitCodeOf, extractFollowUps, type CheckResult, type RunResult, type RunStatus } from '../trace/result.js';
import { RefusalStreak, runGateHooks, runToolCall, type CallGate, type ToolCallLedger } from './tool-call.js';
import { buildToolEnv } from './tool-env.js';
import { createApprover, type Approver } from '../guard/approval/approver.js';
import type { TerminalPrompt } from '../guard/approval/terminal-prompt.js';
import { runStartRules } from '../policy/stack.js';
import { decideRunStart } from '../guard/run-start.js';
import { createSandbox, sandboxConfinement, type Sandbox } from '../guard/sandbox/sandbox.js';
import { findSubreaper, NO_SUBREAPER_WARNING } from '../proc/subreaper.js';
import { applySettings, configDigest, defaultSettings, priceTable, type Settings } from '../config/settings.js';
import { CORRAL_VERSION } from '../package.js';

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
  /** The user and project config of the ticket's repository; none when absent. */
  settings?: Settings;
  /** The terminal to ask a person on; absent, the run is unattended and every ask is refused. */
  prompt?: TerminalPrompt;
  /** How replay scripts are loaded; a command passes the one its ticket loader used, so no script is parsed twice. */
  loadReplayScript?: ReplayLoader;
  /** Nobody is watching (CI, `--unattended`): a sandbox nobody chose must work (preflight.ts). */
  requireSandbox?: boolean;
}

const OUTPUT_CAP = 30_000;
const MAX_TOKENS = 8_192;

/** How a run ended before its result is judged against the fence. */
export type Outcome =
  | LoopOutcome
  | { kind: 'setup_failed'; reason: string }
  | { kind: 'internal_error'; reason: string }
  | { kind: 'not_started'; reason: string }
  | undefined;

export function makeRunId(ticketId: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').replace('T', '-');
  return `${ticketId}-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * One ticket end to end: model → worktree (while the first request is out) → setup → loop →
 * checks → fence → patch/branch → result.
 */
export async function runTicket(written: Ticket, options: RunOptions): Promise<RunResult> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const shownFile = path.relative(options.cwd, written.file) || written.file;
  const settings = options.settings ?? defaultSettings();
  const applied = applySettings(written, settings, { ...(options.model ? { modelOverride: options.model } : {}), shownFile });
  const ticket = applied.ticket;
  const modelId = modelOf(ticket);
  const prices = priceTable(settings);
  // The replay script is checked by the preflight and then played: read and parsed once.
  const loadScript = options.loadReplayScript ?? memoizeReplayLoads();
  const problems = [...applied.problems, ...(await preflightTicket(ticket, { env: options.env, cwd: options.cwd, requireKey: true, prices, loadReplayScript: loadScript, requireSandbox: options.requireSandbox ?? false }))];
  if (problems.length > 0) throw new UsageError(`${shownFile}: cannot run`, problems);
  const model = await prepareModel(modelId, options.env, options.cwd, settings.modelApi, loadScript);
  const baseCommit = ticket.baseCommit ?? (await resolveCommit(ticket.repo, ticket.base));
  if (!baseCommit) throw new UsageError(`${shownFile}: base ${ticket.base} does not resolve to a commit in ${ticket.repo}`);

  const runId = makeRunId(ticket.id, startedAt);
  const runsDir = options.runsDir ?? path.join(ticket.repo, '.corral', 'runs');
  const runDir = path.join(runsDir, runId);
  await mkdir(runDir, { recursive: true });
  if (!options.runsDir) await writeFile(path.join(ticket.repo, '.corral', '.gitignore'), '# run records of corral; never committed\n*\n');
  const secrets = secretValues(options.env);
  const redact = createRedactor(secrets);
  const traceFile = path.join(runDir, 'trace.jsonl');
  const emit = fanOut(createTraceWriter(traceFile, runId, ticket.id, redact, now), options.onEvent ?? (() => undefined));
  const ticketRef = { id: ticket.id, file: ticket.file, ...(ticket.title ? { title: ticket.title } : {}) };
  emit({ type: 'run_start', runId, ticket: ticketRef, model: modelId, runDir, corral: CORRAL_VERSION, configDigest: configDigest(settings, ticket) });

  const warnings: string[] = [];

  const meter = new BudgetMeter(ticket.budget, startedAt, now);
  const ledger: ToolCallLedger = { calls: 0, denied: [], asked: [], streak: new RefusalStreak() };
  const checks = { last: [] as CheckResult[], rounds: 0 };
  const approvalsFile = path.join(runDir, 'approvals-needed.yaml');
  const approver = createApprover({ ...(options.prompt ? { prompt: options.prompt } : {}), approvalsFile, redact });
  const brokenHooks = new Set<string>();
  let outcome: Outcome;
  let worktree: Worktree | undefined;
  let tempDir: string | undefined;
  let forgetTempDir = (): void => undefined;
  let hostBefore: HostState | undefined;
  let sandboxKind: 'bwrap' | 'none' | undefined;

  try {
    outcome = await gateRunStart(ticket, settings, approver, options.interrupt, emit);
    if (outcome) throw new RunNotStarted();
    // The worktree, temp dir, sandbox and guard are made while the model reads the task:
    // the first request goes out now, and nothing it asks for runs before they are ready.
    // A ticket with setup commands waits for them instead, so a failing setup costs no request.
    const workspace = prepareWorkspace(async () => {
      // Which child subreaper ends the commands' processes without a sandbox is found
      // (once per process) while the worktree is made, not after.
      const reaperFound = ticket.sandbox === 'bwrap' ? undefined : findSubreaper();
      // Side by side: making a worktree changes none of what the host state records (refs,
      // HEAD, config, hooks, the host index), and nothing runs before both are done.
      const [host, made] = await Promise.allSettled([recordHostState(ticket.repo), createWorktree(ticket.repo, baseCommit, ticket.id, { keep: options.keep })]);
      if (made.status === 'rejected') throw made.reason;
      worktree = made.value;
      if (host.status === 'rejected') throw host.reason;
      hostBefore = host.value;
      emit({ type: 'worktree', dir: worktree.dir, baseCommit });
      // Named after the worktree, so that a killed run's temp dir goes with its worktree
      // (corral clean, the next run). mkdir fails on anything already there.
      tempDir = runTempDirOf(worktree.dir);
      await mkdir(tempDir, { mode: 0o700 });
      const madeTempDir = tempDir;
      forgetTempDir = trackLeftover(() => rmSync(madeTempDir, { recursive: true, force: true }));
      const env = buildToolEnv(options.env, ticket.env, tempDir);
      // Loaded here, while the first request is out: the guard's shell analysis is the
      // largest part of corral's code, and nothing before that request needs it.
      const [{ hookScriptFiles }, { createGuard }] = await Promise.all([import('../guard/hook-scripts.js'), import('../guard/guard.js')]);
      // Hooks run trusted and unsandboxed, so the scripts they name are kept from every
      // writer: the guard denies the agent's writes, the sandbox binds them read-only, and a
      // script that changes anyway is no longer run (runGateHooks).
      const hookScripts = await hookScriptFiles(settings.hooks, worktree.dir, env);
      const hookDigests = digestFiles(hookScripts);
      // One sandbox for every command of the run: setup, the agent's Bash calls, checks.
      // Read/Write/Edit run in corral, under the guard.
      const sandbox = await createSandbox({
        protectedFiles: hookScripts,
        mode: ticket.sandbox,
        worktree: worktree.dir,
        tmpDir: tempDir,
        network: ticket.network,
        ...(env.HOME ? { home: env.HOME } : {}),
        ...(options.env.PATH ? { searchPath: options.env.PATH } : {}),
        readPaths: ticket.sandboxRead,
        expose: ticket.sandboxExpose,
      });
      sandboxKind = sandbox.kind;
      // Without a sandbox, what ends a command's processes is said too, and never silently missing.
      const reaper = sandbox.containsProcesses ? undefined : await (reaperFound ?? findSubreaper());
      const sandboxWarnings = [sandbox.warning, reaper?.kind === 'none' ? `${NO_SUBREAPER_WARNING} (${reaper.reason})` : undefined].filter((w): w is string => w !== undefined);
      warnings.push(...sandboxWarnings);
      emit({
        type: 'sandbox',
        kind: sandbox.kind,
        network: sandbox.network,
        ...(reaper ? { reaper: reaper.kind } : {}),
        ...(sandboxWarnings.length > 0 ? { warning: sandboxWarnings.join('; ') } : {}),
      });
      const site: CommandSite = { cwd: worktree.dir, env, outputCap: OUTPUT_CAP, sandbox };
      const worktreeDir = worktree.dir;
      const guard = createGuard({
        worktree: worktreeDir,
        tmpDir: madeTempDir,
        env,
        ticket,
        layers: settings.policyLayers,
        hookScripts,
        sandbox: { kind: sandbox.kind, network: sandbox.network },
        exposed: ticket.sandboxExpose,
      });
      emit({ type: 'policy', rules: guard.policy.rules.map((rule) => ({ id: rule.id, effect: rule.effect, scope: rule.scope })), defaultEffect: guard.policy.defaultEffect });
      const gate: CallGate = {
        guard,
        approver,
        hooks: settings.hooks,
        hookSite: (signal) => ({ sessionId: runId, transcriptPath: traceFile, cwd: worktreeDir, env, signal }),
        worktree: worktreeDir,
        ticketId: ticket.id,
        changedHookScript: () => {
          const now = digestFiles(hookScripts);
          const changed = hookScripts.find((file) => now.get(file) !== hookDigests.get(file));
          return changed === undefined ? null : path.relative(worktreeDir, changed);
        },
        onBrokenHook: (event, command, what) => {
          const warning = `${event} hook \`${command}\` ${what}; the run went on without it`;
          if (!brokenHooks.has(warning)) warnings.push(warning);
          brokenHooks.add(warning);
        },
      };
      const toolContext = (signal: AbortSignal): ToolContext => ({
        worktree: worktreeDir,
        env,
        signal,
        outputCap: OUTPUT_CAP,
        bashTimeoutMs: 2 * 60_000,
        bashMaxTimeoutMs: 10 * 60_000,
        sandbox,
      });
      // Setup is the ticket author's and sees the worktree's secrets; the agent's commands
      // and the checks (which run the agent's code) see them as empty.
      if (ticket.setup.length === 0) maskSecrets(sandbox);
      return { site, gate, toolContext, sandbox };
    });
    const maskSecrets = (sandbox: Sandbox): void => {
      const { masked, exposed } = sandbox.maskSecrets();
      emit({ type: 'secrets_masked', masked: [...masked], exposed: [...exposed] });
      if (exposed.length > 0) warnings.push(`exposed to the agent by sandbox.expose: ${exposed.join(', ')}`);
    };
    try {
      if (ticket.setup.length > 0) {
        outcome = await runSetup(ticket, (await workspace.ready).site, options.interrupt, meter, emit);
        if (!outcome) maskSecrets((await workspace.ready).sandbox);
      }
      if (!outcome) {
        const confinement = await sandboxConfinement(ticket.sandbox, ticket.network, options.env.PATH);
        outcome = await runAgentLoop({
          model,
          system: buildSystemPrompt(ticket, confinement),
          taskMessage: buildTaskMessage(ticket),
          tools: toolSpecs(),
          meter,
          maxTokens: MAX_TOKENS,
          checkRounds: ticket.checkRounds,
          // A workspace that cannot be made stops the loop at once, even mid-request.
          interrupt: AbortSignal.any([options.interrupt, workspace.failed]),
          emit,
          priceTurn: (usage) => (isReplayModel(model.id) ? 0 : costUsd(model.id, usage, prices)),
          runToolCall: async (use, step, signal) => {
            const { gate, toolContext } = await workspace.ready;
            return runToolCall(use, step, toolContext(signal), emit, ledger, gate);
          },
          blocked: () => {
            const limit = settings.maxRefusalsInARow.value;
            return ledger.streak.inARow >= limit
              ? `${ledger.streak.inARow} calls in a row were denied or refused (limit ${limit}); stopping instead of burning the budget`
              : null;
          },
          stopHooks: async (active, signal) => runGateHooks((await workspace.ready).gate, 'Stop', { stop_hook_active: active }, signal, emit, meter.steps),
          runChecks: async (round, signal) => {
            const { site } = await workspace.ready;
            checks.rounds = round;
            checks.last = await runChecks(ticket.checks, site, round, emit, signal);
            const passed = checks.last.every((c) => c.passed);
            return { passed, feedback: passed ? '' : formatCheckFeedback(checks.last, round, ticket.checkRounds) };
          },
        });
      }
    } finally {
      // Whatever ended the loop (an interrupt included), the worktree is made or has failed
      // before the result is recorded and it is cleaned up.
      await workspace.settled;
    }
    // A workspace that could not be made is the run's failure, not the loop's interruption.
    await workspace.ready;
  } catch (error) {
    if (!(error instanceof RunNotStarted)) outcome = { kind: 'internal_error', reason: error instanceof Error ? error.message : String(error) };
  }

  // Cleanup never hides the result: a step that fails becomes a warning.
  let removal: Promise<void> | undefined;
  const removeMadeWorktree = (made: Worktree): Promise<void> =>
    (removal ??= removeWorktree(made).catch((error: unknown) => void warnings.push(`could not remove the worktree ${made.dir}: ${String(error)}`)));
  const recorded = worktree
    ? await recordResult({
        worktree,
        ticket,
        runId,
        runDir,
        outcome,
        secrets,
        emit,
        hostBefore,
        interrupt: options.interrupt,
        ...(options.keep ? {} : { release: removeMadeWorktree }),
      })
    : { ...decideStatus(outcome, { ok: true, verdicts: [] }, ticket), fence: { ok: true, verdicts: [] }, hostChanges: [], keepWorktree: false };
  if (worktree && !options.keep && !recorded.keepWorktree) await removeMadeWorktree(worktree);
  if (worktree && (options.keep || recorded.keepWorktree)) await releaseWorktree(worktree);
  if (recorded.keepWorktree && worktree) warnings.push(`the worktree was kept because the patch could not be written: ${worktree.dir}`);
  if (tempDir) await rm(tempDir, { recursive: true, force: true }).catch(() => warnings.push(`could not remove ${tempDir}`));
  forgetTempDir();

  const exitCode = exitCodeOf(recorded.status);
  emit({ type: 'end', status: recorded.status, exitCode, reason: recorded.reason });
  const finalText = outcome && 'finalText' in outcome ? outcome.finalText : '';
  const keptWorktree = worktree && (options.keep || recorded.keepWorktree) ? worktree.dir : undefined;
  return {
    runId,
    ticket: ticketRef,
    status: recorded.status,
    exitCode,
    reason: recorded.reason,
    ...(outcome?.kind === 'budget_exhausted' ? { budgetExhausted: outcome.exceeded.which } : {}),
    model: modelId,
    steps: meter.steps,
    usage: meter.usage,
    costUsd: meter.costUsd,
    durationMs: now() - startedAt,
    baseCommit,
    changes: recorded.fence.verdicts,
    ...(recorded.hostChanges.length > 0 ? { hostChanges: recorded.hostChanges } : {}),
    checks: checks.last,
    checkRoundsUsed: checks.rounds,
    toolCalls: ledger.calls,
    denied: ledger.denied,
    asked: ledger.asked,
    ...(existsSync(approvalsFile) ? { approvalsNeeded: approvalsFile } : {}),
    followUps: extractFollowUps(finalText),
    finalText,
    runDir,
    ...(recorded.patch ? { patch: recorded.patch } : {}),
    trace: traceFile,
    ...(recorded.branch ? { branch: recorded.branch } : {}),
    ...(keptWorktree ? { worktree: keptWorktree } : {}),
    ...(sandboxKind ? { sandbox: sandboxKind } : {}),
    warnings,
  };
}

/** The sha256 of each file, or '' for one that cannot be read (gone, replaced by a folder). */
function digestFiles(files: string[]): Map<string, string> {
  return new Map(
    files.map((file) => {
      try {
        return [file, createHash('sha256').update(readFileSync(file)).digest('hex')];
      } catch {
        return [file, ''];
      }
    }),
  );
}

/** The workspace of a run, being made: `ready` once made, `failed` aborted if that fails. */
interface PendingWorkspace<T> {
  ready: Promise<T>;
  failed: AbortSignal;
  /** Resolves once making it has ended either way; never rejects. */
  settled: Promise<void>;
}

function prepareWorkspace<T>(make: () => Promise<T>): PendingWorkspace<T> {
  const failure = new AbortController();
  // Begun on the next turn of the event loop, after the first request has gone out:
  // starting each git process blocks this thread while it forks.
  const ready = new Promise<void>((resolve) => setImmediate(resolve)).then(make);
  const settled = ready.then(
    () => undefined,
    () => failure.abort(),
  );
  return { ready, failed: failure.signal, settled };
}

/** Thrown to skip from a run-start refusal to recording the result; never escapes runTicket. */
class RunNotStarted extends Error {}

/**
 * The \`hook: run.start\` rules of config and ticket, over the ticket alone: a deny ends
 * the run before any worktree exists; an ask goes to the approver like a call would.
 */
async function gateRunStart(ticket: Ticket, settings: Settings, approver: Approver, interrupt: AbortSignal, emit: EmitEvent): Promise<Outcome> {
  const rules = [...settings.runStart, ...runStartRules([{ scope: 'ticket', file: ticket.policy, source: ticket.file }])];
  const decision = decideRunStart(rules, ticket);
  if (decision === null) return undefined;
  let approved = false;
  if (decision.effect === 'ask') {
    const answer = await approver.ask({ ticketId: ticket.id, step: 0, tool: 'run.start', input: { ticket: ticket.id, labels: ticket.labels.join(', ') }, decision, commands: [], paths: [], worktree: ticket.repo }, interrupt).catch(() => ({ approved: false }) as const);
    approved = answer.approved;
  }
  emit({ type: 'run_gate', ...decision, ...(decision.effect === 'ask' ? { approved } : {}) });
  if (interrupt.aborted) return { kind: 'interrupted', finalText: '' };
  if (approved) return undefined;
  const how = decision.effect === 'deny' ? 'was denied' : 'needed approval and was refused';
  return { kind: 'not_started', reason: `the run ${how} by run.start rule ${decision.rule} (${decision.source ?? decision.scope}): ${decision.reason}` };
}

/** The ticket's setup commands, bounded by the interrupt and the minute budget. */
async function runSetup(ticket: Ticket, site: CommandSite, interrupt: AbortSignal, meter: BudgetMeter, emit: EmitEvent): Promise<Outcome> {
  const deadline = AbortSignal.timeout(Math.max(0, ticket.budget.minutes * 60_000 - meter.elapsedMs()));
  const signal = AbortSignal.any([interrupt, deadline]);
  for (const command of ticket.setup) {
    const result = await runTicketCommand(command, site, signal);
    emit({ type: 'setup', name: result.name, exitCode: result.exitCode, timedOut: result.timedOut, durationMs: result.durationMs, output: result.output });
    if (interrupt.aborted) return { kind: 'interrupted', finalText: '' };
    if (deadline.aborted) return { kind: 'budget_exhausted', exceeded: { which: 'minutes', detail: `${ticket.budget.minutes} minute limit reached during setup` }, finalText: '' };
    if (!result.passed) {
      return { kind: 'setup_failed', reason: `setup command \`${command.run}\` ${result.timedOut ? 'timed out' : `exited ${result.exitCode}`}` };
    }
  }
  return undefined;
}

interface Recorded {
  status: RunStatus;
  reason: string;
  fence: FenceResult;
  /** How the host repository differs from before the run; empty when it does not. */
  hostChanges: string[];
  patch?: string;
  branch?: string;
  /** The patch could not be written, so the worktree is the only copy of the work. */
  keepWorktree: boolean;
}

/**
 * Keeps the agent's work whatever happened: reads the fence, writes the patch (with any
 * secret value redacted), and commits a passed run to its branch.
 */
async function recordResult(input: {
  worktree: Worktree;
  ticket: Ticket;
  runId: string;
  runDir: string;
  outcome: Outcome;
  secrets: SecretValue[];
  emit: EmitEvent;
  /** The host repository before the worktree was made. */
  hostBefore: HostState | undefined;
  interrupt: AbortSignal;
  /** Starts removing the worktree; called once the patch is written and nothing more is read from it. */
  release?: (worktree: Worktree) => Promise<void>;
}): Promise<Recorded> {
  const { worktree, ticket, runId, outcome } = input;
  let fence: FenceResult = { ok: true, verdicts: [] };
  let hostChanges: string[] = [];
  let patch: string | undefined;
  try {
    // The host's state is read beside the snapshot: one is the host repository, the other
    // the worktree, and the agent is done with both.
    const { hostBefore } = input;
    const hostChanged = hostBefore ? recordHostState(ticket.repo, hostBefore).then((after) => hostDifferences(hostBefore, after)) : Promise.resolve([]);
    hostChanged.catch(() => undefined);
    const snapshot = await snapshotWorktree(worktree);
    try {
      const changes = await listChanges(snapshot);
      fence = checkFence(changes, ticket.allow, ticket.forbid);
      input.emit({ type: 'fence', ok: fence.ok, verdicts: fence.verdicts });
      // No change against the base is an empty patch: no git process needed to say so.
      const bytes = changes.length === 0 ? Buffer.alloc(0) : await diffSnapshot(snapshot);
      const leaked = findAddedSecrets(bytes, input.secrets);
      const patchFile = path.join(input.runDir, 'patch.diff');
      await writeFile(patchFile, leaked ? leaked.redacted : bytes);
      patch = patchFile;
      hostChanges = await hostChanged;
      input.emit({ type: 'host', ok: hostChanges.length === 0, differences: hostChanges });
      if (leaked) {
        return { status: 'fence_violated', reason: `the change contains ${describeSecrets(leaked.added, input.secrets)}; it was redacted in the patch and not committed`, fence, hostChanges, patch, keepWorktree: false };
      }
      let verdict = decideStatus(outcome, fence, ticket, hostChanges);
      // A Ctrl-C while the result was being recorded still means interrupted: no branch.
      if (verdict.status === 'passed' && input.interrupt.aborted) verdict = { status: 'interrupted', reason: 'interrupted' };
      if (verdict.status !== 'passed') return { ...verdict, fence, hostChanges, patch, keepWorktree: false };
      // The patch is written and the fence read: the worktree goes while the result is
      // committed (in the host repository, from the snapshot's own index).
      void input.release?.(worktree);
      const message = `corral: ${ticket.title ?? ticket.id}\n\nTicket: ${ticket.id}\nRun: ${runId}\n`;
      const { branch } = await commitToBranch(snapshot, `corral/${ticket.id}`, message, runId.slice(ticket.id.length + 1), { unchanged: changes.length === 0 });
      return { ...verdict, fence, hostChanges, patch, branch, keepWorktree: false };
    } finally {
      await snapshot.dispose();
    }
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    // An interruption stays an interruption even if recording then failed.
    const status: RunStatus = outcome?.kind === 'interrupted' ? 'interrupted' : 'internal_error';
    return { status, reason: `could not record the result: ${detail}`, fence, hostChanges, ...(patch ? { patch } : {}), keepWorktree: patch === undefined };
  }
}

/** "the value of NAME, the value of NAME as base64, a secret shaped like gitlab-pat". */
function describeSecrets(found: string[], secrets: SecretValue[]): string {
  const names = new Set(secrets.map(({ name }) => name));
  return found.map((rule) => (names.has(rule.split(' ')[0]!) ? `the value of ${rule}` : `a secret shaped like ${rule}`)).join(', ');
}

/** The run's status: a breached fence beats every outcome but an interruption or a bug. */
export function decideStatus(outcome: Outcome, fence: FenceResult, ticket: Pick<Ticket, 'allowEmpty'>, hostChanges: string[] = []): { status: RunStatus; reason: string } {
  if (!outcome) return { status: 'internal_error', reason: 'the run ended before the agent started' };
  if (outcome.kind === 'interrupted') return { status: 'interrupted', reason: 'interrupted' };
  if (outcome.kind === 'internal_error') return { status: 'internal_error', reason: outcome.reason };
  if (hostChanges.length > 0) {
    return { status: 'fence_violated', reason: `the host repository changed during the run: ${hostChanges.join('; ')}` };
  }
  if (!fence.ok) {
    const bad = fence.verdicts.filter((v) => !v.allowed).map((v) => v.change.path);
    return { status: 'fence_violated', reason: `changed ${bad.length} path(s) outside the fence: ${bad.join(', ')}` };
  }
  switch (outcome.kind) {
    case 'setup_failed':
      return { status: 'failed', reason: outcome.reason };
    case 'not_started':
      return { status: 'blocked', reason: outcome.reason };
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
