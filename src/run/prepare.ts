import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { BudgetMeter } from '../agent/budget.js';
import { agentCliModel, prepareModel } from '../agent/create-model.js';
import type { Model } from '../agent/model.js';
import { memoizeReplayLoads, type ReplayLoader } from '../agent/replay-model.js';
import { createApprover, type Approver } from '../guard/approval/approver.js';
import type { TerminalPrompt } from '../guard/approval/terminal-prompt.js';
import { configDigest, defaultSettings, priceTable, type Settings } from '../config/settings.js';
import type { PriceTable } from '../config/prices.js';
import { UsageError } from '../errors.js';
import { resolveCommit } from '../git/git.js';
import { commitWorkingTree } from '../workspace/working-tree.js';
import { CORRAL_VERSION } from '../package.js';
import { createRedactor, secretValues, type Redactor, type SecretValue } from '../text/redact.js';
import type { Ticket } from '../ticket/types.js';
import type { EmitEvent } from '../trace/events.js';
import { foldAndFanOut } from '../trace/fan-out.js';
import { createRunFold, type IncrementalFold } from '../trace/fold.js';
import { createTraceWriter, describeWriteError, type TraceFileSystem, type TraceWriteFailure } from '../trace/write.js';
import { modelOf } from './preflight.js';

export interface RunOptions {
  /** Keep the worktree after the run and say where it is. */
  keep: boolean;
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
  /** The user and project config the ticket was loaded with; defaults when absent. */
  settings?: Settings;
  /** The terminal to ask a person on; absent, the run is unattended and every ask is refused. */
  prompt?: TerminalPrompt;
  /** Start from the host's working tree (uncommitted and untracked files included) instead of the base commit. */
  fromWorktree?: boolean;
  /** How replay scripts are loaded; a command passes the one its ticket loader used, so no script is parsed twice. */
  loadReplayScript?: ReplayLoader;
  /** The file operations the trace is written with; default node's. A test's fails on purpose (a full disk). */
  traceFileSystem?: TraceFileSystem;
}

/** Everything a run's stages share, made once by `prepareRun`. */
export interface Run {
  ticket: Ticket;
  settings: Settings;
  options: RunOptions;
  now: () => number;
  startedAt: number;
  runId: string;
  runDir: string;
  traceFile: string;
  approvalsFile: string;
  ticketRef: { id: string; file: string; title?: string };
  model: Model;
  modelId: string;
  prices: PriceTable;
  baseCommit: string;
  /** The base commit is a commit of the host's working tree on top of HEAD (--from-worktree). */
  fromWorktree: boolean;
  /** The host's secret values: redacted from the trace and the patch, and looked for in the change. */
  secrets: SecretValue[];
  /** Redacts those values and well-known key shapes: what the trace writer applies to every line. */
  redact: Redactor;
  emit: EmitEvent;
  meter: BudgetMeter;
  approver: Approver;
  /** The facts of the run so far, folded from its events as they are emitted: the result is made from them. */
  fold: IncrementalFold;
  /** Tells a person something that does not change the outcome: a `warning` event, each message once. */
  warn(message: string): void;
  /** Why the trace could not be written, once it could not: the run stops (as if interrupted) and ends as an internal error. */
  traceFailure(): TraceWriteFailure | null;
}

/** The values of the variables hooks take from corral's environment (`env_from_host`) that are not already secrets. */
function hookHostValues(settings: Settings, env: NodeJS.ProcessEnv, secrets: SecretValue[]): SecretValue[] {
  const names = new Set(Object.values(settings.hooks ?? {}).flatMap((groups) => (groups ?? []).flatMap((group) => group.hooks.flatMap((hook) => hook.env_from_host ?? []))));
  return [...names].flatMap((name) => {
    const value = env[name];
    // As for secret-named variables: a short value is too likely to occur by chance.
    return value !== undefined && value.length >= 8 && !secrets.some((secret) => secret.name === name) ? [{ name, value }] : [];
  });
}

export function makeRunId(ticketId: string, now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').replace('T', '-');
  return `${ticketId}-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * The first stage: the model, the base commit, the run directory and its trace. The
 * ticket comes from `loadTickets`, with its config applied and its preflight passed, so
 * nothing here checks it again.
 */
export async function prepareRun(ticket: Ticket, options: RunOptions): Promise<Run> {
  const now = options.now ?? Date.now;
  const startedAt = now();
  const shownFile = path.relative(options.cwd, ticket.file) || ticket.file;
  const settings = options.settings ?? defaultSettings();
  const modelId = modelOf(ticket);
  const loadScript = options.loadReplayScript ?? memoizeReplayLoads();
  // The base is looked up first: loading the model's client (the SDK, the heaviest code
  // corral has) then runs on this thread while git runs, not after it.
  const baseLookup = ticket.baseCommit === undefined ? resolveCommit(ticket.repo, ticket.base) : Promise.resolve(ticket.baseCommit);
  // Settled either way before this returns or throws: no rejection is left unhandled.
  baseLookup.catch(() => undefined);
  // An agent CLI talks to its model itself: nothing of corral's model client is made.
  const model = ticket.agent === 'corral' ? await prepareModel(modelId, options.env, options.cwd, settings.modelApi, loadScript) : agentCliModel(modelId, ticket.agent);
  const baseCommit = await baseLookup;
  if (!baseCommit) throw new UsageError(`${shownFile}: base ${ticket.base} does not resolve to a commit in ${ticket.repo}`);
  const fromWorktree = options.fromWorktree === true;
  if (fromWorktree) {
    // The working tree is a change to HEAD; on another base it would mean nothing.
    const head = await resolveCommit(ticket.repo, 'HEAD');
    if (head !== baseCommit) throw new UsageError(`${shownFile}: --from-worktree starts from your working tree, which sits on HEAD, but the ticket's base ${ticket.base} is another commit`);
  }
  const runBase = fromWorktree ? await commitWorkingTree(ticket.repo, baseCommit) : baseCommit;

  const runId = makeRunId(ticket.id, startedAt);
  const runDir = path.join(options.runsDir ?? path.join(ticket.repo, '.corral', 'runs'), runId);
  try {
    await mkdir(runDir, { recursive: true });
    if (!options.runsDir) await writeFile(path.join(ticket.repo, '.corral', '.gitignore'), '# run records of corral; never committed\n*\n');
  } catch (error) {
    // A disk that filled up since the preflight (an earlier ticket of the batch): said plainly, before any worktree.
    throw new Error(`cannot make the run directory ${runDir}: ${describeWriteError(error)}`, { cause: error });
  }
  // Claude Code's `env` may set a secret too: its value is redacted like the host's.
  const configValues = Object.entries(settings.env).flatMap(([name, sourced]) => (typeof sourced.value === 'string' ? [[name, sourced.value] as const] : []));
  const secrets = secretValues({ ...Object.fromEntries(Object.entries(settings.claudeCodeEnv).map(([name, sourced]) => [name, sourced.value])), ...Object.fromEntries(configValues), ...options.env });
  // What hooks get from corral's environment by name is as secret as a key: redacted too.
  const redact = createRedactor([...secrets, ...hookHostValues(settings, options.env, secrets)]);
  const traceFile = path.join(runDir, 'trace.jsonl');
  const fold = createRunFold();
  // A run that can no longer be recorded stops at once, the way an interrupt stops it
  // (commands ended, the work judged and kept), rather than running to the end unrecorded.
  const traceStopped = new AbortController();
  const writeTrace = createTraceWriter(traceFile, runId, ticket.id, redact, now, options.traceFileSystem, () => traceStopped.abort());
  const runOptions: RunOptions = { ...options, interrupt: AbortSignal.any([options.interrupt, traceStopped.signal]) };
  const emit = foldAndFanOut(fold, writeTrace, options.onEvent ?? (() => undefined));
  const warned = new Set<string>();
  const warn = (message: string): void => {
    if (warned.has(message)) return;
    warned.add(message);
    emit({ type: 'warning', message });
  };
  const ticketRef = { id: ticket.id, file: ticket.file, ...(ticket.title ? { title: ticket.title } : {}) };
  emit({ type: 'run_start', runId, ticket: ticketRef, model: modelId, runDir, corral: CORRAL_VERSION, configDigest: configDigest(settings, ticket), baseCommit: runBase, trace: traceFile });
  const approvalsFile = path.join(runDir, 'approvals-needed.yaml');
  return {
    ticket,
    settings,
    options: runOptions,
    now,
    startedAt,
    runId,
    runDir,
    traceFile,
    approvalsFile,
    ticketRef,
    model,
    modelId,
    prices: priceTable(settings),
    baseCommit: runBase,
    fromWorktree,
    secrets,
    redact,
    emit,
    meter: new BudgetMeter(ticket.budget, startedAt, now),
    approver: createApprover({ ...(options.prompt ? { prompt: options.prompt } : {}), approvalsFile, redact }),
    fold,
    warn,
    traceFailure: () => writeTrace.failure,
  };
}
