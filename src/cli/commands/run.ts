import { availableParallelism } from 'node:os';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { loadTickets } from '../../run/load-tickets.js';
import type { FindRepoAndCommit } from '../../ticket/references.js';
import { toJsonReport } from '../../report/json.js';
import { createRedactor, secretValues } from '../../text/redact.js';
import { runTicket } from '../../run/run-ticket.js';
import { checkDiskSpace } from '../../run/disk-space.js';
import { internalErrorResult } from '../../trace/result.js';
import { modelOf } from '../../run/preflight.js';
import { isReplayModel, replayModelId, replayScriptPath } from '../../ticket/model-id.js';
import { memoizeReplayLoads } from '../../agent/replay-model.js';
import { preloadModelClient } from '../../agent/create-model.js';
import { createTerminalPrompt, type TerminalPrompt } from '../../guard/approval/terminal-prompt.js';
import { scheduleBatch } from '../../batch/schedule.js';
import { inShard, parseShard } from '../../batch/shard.js';
import { skippedReport, sortTicketReports, totalsOf, type TicketReport } from '../../report/batch-report.js';
import { EXIT } from '../../errors.js';
import { interruptOnSignals } from '../interrupt.js';
import { isCi } from '../ci.js';
import { openReporters, readReporting } from '../reporting.js';
import { checkTmpdir, checkWritableFolder } from '../output-paths.js';
import type { CliIo } from '../io.js';
import type { RunCommandOptions } from '../main.js';

/**
 * `corral run`: validate every ticket first (nothing runs if one is bad), keep this
 * shard's, run them `--jobs` at a time, then report the batch. `findRepo`: the command's
 * repository lookups, some asked before this code loaded.
 */
export async function runCommand(inputs: string[], options: RunCommandOptions, io: CliIo, findRepo?: FindRepoAndCommit): Promise<number> {
  const cwd = process.cwd();
  const jobs = options.jobs === undefined ? availableParallelism() : parseCount('--jobs', options.jobs);
  const shard = options.shard === undefined ? undefined : parseShard(options.shard);
  const maxUsd = options.maxUsd === undefined ? undefined : parseUsd(options.maxUsd);
  const reporting = await readReporting(options, cwd);
  const runsDir = !options.runsDir ? undefined : path.resolve(cwd, options.runsDir);
  if (runsDir !== undefined) await checkWritableFolder(runsDir, `--runs-dir ${options.runsDir}`);
  await checkTmpdir(io.env);
  const model = options.model && isReplayModel(options.model) ? replayModelId(path.resolve(cwd, replayScriptPath(options.model))) : options.model;
  // One loader for the command: each replay script is read and checked once, by the ticket loader, and then played.
  const loadReplayScript = memoizeReplayLoads();
  // Nobody watching means nobody to notice commands running unconfined: that must be chosen.
  const requireSandbox = Boolean(options.unattended) || isCi(io.env);
  const loaded = await loadTickets(inputs, { ...(model ? { model } : {}), ...(options.agent ? { agent: options.agent } : {}), env: io.env, cwd, requireKey: true, requireUsdBudget: maxUsd !== undefined, loadReplayScript, requireSandbox, fromWorktree: Boolean(options.fromWorktree), ...(findRepo ? { findRepo } : {}) });
  const problems = loaded.flatMap((l) => l.problems);
  if (problems.length > 0) throw new UsageError(`${problems.length} problem(s) in the tickets; nothing was run`, problems);
  const runs = loaded
    .flatMap((l) => (l.ticket ? [{ ticket: l.ticket, settings: l.settings, budgetUsd: l.budgetUsd }] : []))
    .filter((run) => shard === undefined || inShard(run.ticket.id, shard));
  const diskChecked = checkDiskSpace(
    runs.map((run) => run.ticket),
    { jobs, ...(runsDir ? { runsDir, runsDirShown: options.runsDir } : {}) },
  );
  // Awaited below; handled now, so a refusal while the code loads is not an unhandled rejection.
  diskChecked.catch(() => undefined);
  // While git lists the base's tree for that, the model client's code loads: it is on the
  // way to the first request, and this thread would only wait for git otherwise.
  await preloadModelClient(runs.flatMap((run) => (run.ticket.agent === 'corral' ? [modelOf(run.ticket)] : []))).catch(() => undefined);
  await diskChecked;

  // What corral prints is redacted like its trace: by the host's secret values and by key shape.
  const redact = createRedactor(secretValues(io.env));
  const reporters = openReporters(reporting, runs.length, io, cwd, redact);
  const interrupt = io.interrupt ? { signal: io.interrupt, dispose() {} } : interruptOnSignals((line) => reporters.notice(line));
  // One terminal for every run of this command; nobody to ask means every ask is refused.
  const prompt = isAttended(options, io) ? promptAboveLiveView(createTerminalPrompt(io.stdin, io.stderr), reporters.prompting) : undefined;
  const reports: TicketReport[] = [];
  const startedAt = Date.now();
  try {
    reporters.onBatchStart({ tickets: runs.length, merged: false });
    await scheduleBatch(
      runs.map((run) => ({ id: run.ticket.id, ...(run.budgetUsd === undefined ? {} : { budgetUsd: run.budgetUsd }), run })),
      {
        jobs,
        bail: Boolean(options.bail),
        ...(maxUsd === undefined ? {} : { maxUsd }),
        signal: interrupt.signal,
        run: async ({ run: { ticket, settings } }) => {
          reporters.onRunStart(ticket.id);
          const ticketStartedAt = Date.now();
          const result = await runTicket(ticket, {
            keep: Boolean(options.keep),
            fromWorktree: Boolean(options.fromWorktree),
            ...(settings ? { settings } : {}),
            ...(prompt ? { prompt } : {}),
            loadReplayScript,
            ...(runsDir ? { runsDir } : {}),
            interrupt: interrupt.signal,
            env: io.env,
            cwd,
            onEvent: (event) => reporters.onEvent(ticket.id, event),
          }).catch((error: unknown) => {
            // Bad input found only now (a base gone since the tickets were checked) stays exit 64.
            if (error instanceof UsageError) throw error;
            // A bug or a failing machine, not an outcome: said on stderr too, and the batch goes on.
            reporters.notice(redact(`[${ticket.id}] internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`));
            return internalErrorResult(ticket, model ?? modelOf(ticket), error, Date.now() - ticketStartedAt);
          });
          const report = toJsonReport(result, redact);
          reports.push(report);
          reporters.onRunEnd(result, report);
          return { failed: result.exitCode !== EXIT.passed, costUsd: result.costUsd };
        },
        skip: ({ run: { ticket } }, cause, reason) => {
          const report = skippedReport(ticket, cause, reason);
          reports.push(report);
          reporters.onSkipped(report);
        },
      },
    );
  } finally {
    prompt?.close();
    interrupt.dispose();
    reporters.close();
  }
  const report = {
    tickets: sortTicketReports(reports),
    totals: totalsOf(reports, Date.now() - startedAt, shard ? [shard] : [], stoppedBySignal(interrupt.signal, reports) ? [EXIT.interrupted] : []),
  };
  await reporters.onBatchEnd(report);
  return report.totals.exitCode;
}

/**
 * Whether a stop signal changed the batch: a ticket ended interrupted, or was never run.
 * A signal that came once every ticket's result was decided (its branch being committed)
 * changed nothing: the tickets finished, and the exit code is theirs, as the summary says.
 */
function stoppedBySignal(signal: AbortSignal, reports: TicketReport[]): boolean {
  return signal.aborted && (reports.length === 0 || reports.some((report) => report.status === 'interrupted' || (report.type === 'skipped' && report.cause === 'interrupted')));
}

/** A person can answer asks only at a terminal (to read the prompt on stderr and type on stdin), outside CI, unless told not to ask. */
export function isAttended(options: RunCommandOptions, io: CliIo): boolean {
  return !options.unattended && !isCi(io.env) && io.stdin.isTTY === true && io.stderr.isTTY === true;
}

/** Each question takes the terminal from the live view until it is answered. */
function promptAboveLiveView(prompt: TerminalPrompt, prompting: <T>(ask: () => Promise<T>) => Promise<T>): TerminalPrompt {
  return {
    question: (lines, signal, accept) => prompting(() => prompt.question(lines, signal, accept)),
    close: () => prompt.close(),
  };
}

function parseCount(option: string, text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) throw new UsageError(`${option} ${JSON.stringify(text)}: expected a whole number of at least 1`);
  return n;
}

function parseUsd(text: string): number {
  const usd = Number(text.replace(/^\$/, ''));
  if (text.trim() === '' || !Number.isFinite(usd) || usd < 0) throw new UsageError(`--max-usd ${JSON.stringify(text)}: expected an amount in US dollars, e.g. --max-usd 5 or --max-usd 0.50`);
  return usd;
}
