import path from 'node:path';
import { UsageError } from '../../errors.js';
import { loadTickets } from '../../run/load-tickets.js';
import { toJsonReport } from '../../report/json.js';
import { createRedactor, secretValues } from '../../report/redact.js';
import { formatProgress } from '../../report/progress.js';
import { chooseChalk } from '../../report/style.js';
import { formatSummary } from '../../report/summary.js';
import { mostSevereExitCode } from '../../run/result.js';
import { runTicket } from '../../run/run-ticket.js';
import { isReplayModel, replayModelId, replayScriptPath } from '../../agent/model-id.js';
import { createTerminalPrompt } from '../../guard/approval/terminal-prompt.js';
import { interruptOnSignals } from '../interrupt.js';
import type { CliIo } from '../io.js';
import type { RunCommandOptions } from '../main.js';

/** `corral run`: validate every ticket first (nothing runs if one is bad), then run each in turn. */
export async function runCommand(inputs: string[], options: RunCommandOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const model = options.model && isReplayModel(options.model) ? replayModelId(path.resolve(cwd, replayScriptPath(options.model))) : options.model;
  const loaded = await loadTickets(inputs, { ...(model ? { model } : {}), env: io.env, cwd, requireKey: true });
  const problems = loaded.flatMap((l) => l.problems);
  if (problems.length > 0) throw new UsageError(`${problems.length} problem(s) in the tickets; nothing was run`, problems);
  const runs = loaded.flatMap((l) => (l.ticket ? [{ ticket: l.ticket, settings: l.settings }] : []));

  // What corral prints is redacted like its trace: by the host's secret values and by key shape.
  const redact = createRedactor(secretValues(io.env));
  const err = chooseChalk(io.env, io.stderr.isTTY);
  const out = chooseChalk(io.env, io.stdout.isTTY);
  const interrupt = io.interrupt ? { signal: io.interrupt, dispose() {} } : interruptOnSignals();
  // One terminal for every run of this command; nobody to ask means every ask is refused.
  const prompt = isAttended(options, io) ? createTerminalPrompt(io.stdin, io.stderr) : undefined;
  const codes: number[] = [];
  try {
    for (const { ticket, settings } of runs) {
      if (interrupt.signal.aborted) break;
      const result = await runTicket(ticket, {
        keep: Boolean(options.keep),
        ...(model ? { model } : {}),
        ...(settings ? { settings } : {}),
        ...(prompt ? { prompt } : {}),
        ...(options.runsDir ? { runsDir: path.resolve(cwd, options.runsDir) } : {}),
        interrupt: interrupt.signal,
        env: io.env,
        cwd,
        onEvent: (event) => {
          const line = formatProgress(ticket.id, event, err);
          if (line) io.stderr.write(`${redact(line)}\n`);
        },
      });
      codes.push(result.exitCode);
      if (options.json) io.stdout.write(`${JSON.stringify(toJsonReport(result, redact))}\n`);
      else io.stdout.write(`${redact(formatSummary(result, out, cwd))}\n`);
    }
  } finally {
    prompt?.close();
    interrupt.dispose();
  }
  if (interrupt.signal.aborted) codes.push(130);
  return mostSevereExitCode(codes);
}


/** A person can answer asks only at a terminal (to read the prompt on stderr and type on stdin), outside CI, unless told not to ask. */
export function isAttended(options: RunCommandOptions, io: CliIo): boolean {
  const ci = io.env.CI !== undefined && io.env.CI !== '' && io.env.CI !== 'false' && io.env.CI !== '0';
  return !options.unattended && !ci && io.stdin.isTTY === true && io.stderr.isTTY === true;
}
