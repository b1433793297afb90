import path from 'node:path';
import { UsageError, type Problem } from '../../errors.js';
import { toJsonReport } from '../../report/json.js';
import { formatProgress } from '../../report/progress.js';
import { chooseChalk } from '../../report/style.js';
import { formatSummary } from '../../report/summary.js';
import { mostSevereExitCode } from '../../run/result.js';
import { runTicket } from '../../run/run-ticket.js';
import { discoverTickets } from '../../ticket/discover.js';
import { findDuplicateIds } from '../../ticket/duplicate-ids.js';
import { loadTicket } from '../../ticket/load.js';
import { checkReplayScript } from '../../agent/create-model.js';
import type { Ticket } from '../../ticket/types.js';
import { interruptOnSignals } from '../interrupt.js';
import type { CliIo } from '../io.js';
import type { RunCommandOptions } from '../main.js';

/** `corral run`: validate every ticket first (nothing runs if one is bad), then run each in turn. */
export async function runCommand(inputs: string[], options: RunCommandOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const files = await discoverTickets(inputs.map((p) => path.resolve(cwd, p)));
  if (files.length === 0) throw new UsageError(`no ticket files found in ${inputs.join(', ')}`);

  const model = options.model?.startsWith('replay:') ? `replay:${path.resolve(cwd, options.model.slice(7))}` : options.model;
  const tickets: Ticket[] = [];
  const problems: Problem[] = [];
  for (const file of files) {
    try {
      const ticket = await loadTicket(path.relative(cwd, file) || file);
      await checkReplayScript(model ?? ticket.model, cwd);
      tickets.push(ticket);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      const shown = path.relative(cwd, file) || file;
      // A problem with no position still stops the run; it is reported against the ticket.
      problems.push(...(error.problems.length > 0 ? error.problems : [{ file: shown, line: 1, column: 1, field: '', message: error.message }]));
    }
  }
  problems.push(...findDuplicateIds(tickets, cwd));
  if (problems.length > 0) {
    throw new UsageError(`${problems.length} problem(s) in the tickets; nothing was run`, problems);
  }

  const err = chooseChalk(io.env, io.stderr.isTTY);
  const out = chooseChalk(io.env, io.stdout.isTTY);
  const interrupt = io.interrupt ? { signal: io.interrupt, dispose() {} } : interruptOnSignals();
  const codes: number[] = [];
  try {
    for (const ticket of tickets) {
      if (interrupt.signal.aborted) break;
      const result = await runTicket(ticket, {
        keep: Boolean(options.keep),
        ...(model ? { model } : {}),
        ...(options.runsDir ? { runsDir: path.resolve(cwd, options.runsDir) } : {}),
        interrupt: interrupt.signal,
        env: io.env,
        cwd,
        onEvent: (event) => {
          const line = formatProgress(ticket.id, event, err);
          if (line) io.stderr.write(`${line}\n`);
        },
      });
      codes.push(result.exitCode);
      if (options.json) io.stdout.write(`${JSON.stringify(toJsonReport(result))}\n`);
      else io.stdout.write(`${formatSummary(result, out, cwd)}\n`);
    }
  } finally {
    interrupt.dispose();
  }
  if (interrupt.signal.aborted) codes.push(130);
  return mostSevereExitCode(codes);
}

