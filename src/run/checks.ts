import type { EmitEvent } from '../trace/events.js';
import type { TicketCommand } from '../ticket/types.js';
import { runCommand, type CommandSandbox } from '../proc/run-command.js';
import type { CheckResult } from '../trace/result.js';

export interface CommandSite {
  cwd: string;
  env: Record<string, string>;
  outputCap: number;
  /** The run's sandbox: setup commands and checks run inside it like the agent's Bash calls. */
  sandbox?: CommandSandbox;
}

/** Runs a ticket command (setup or check) with the one process runner. */
export async function runTicketCommand(command: TicketCommand, site: CommandSite, signal?: AbortSignal): Promise<CheckResult> {
  const result = await runCommand({
    command: command.run,
    cwd: site.cwd,
    env: site.env,
    timeoutMs: command.timeoutMs,
    outputCap: site.outputCap,
    ...(signal ? { signal } : {}),
    ...(site.sandbox ? { sandbox: site.sandbox } : {}),
  });
  return {
    name: command.name,
    command: command.run,
    passed: result.exitCode === 0 && !result.timedOut && !result.aborted,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: Math.round(result.durationMs),
    output: result.output,
  };
}

/** Runs every check (all of them, so the model sees every failure at once). */
export async function runChecks(
  checks: TicketCommand[],
  site: CommandSite,
  round: number,
  emit: EmitEvent,
  signal: AbortSignal,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const check of checks) {
    if (signal.aborted) break;
    const result = await runTicketCommand(check, site, signal);
    emit({ type: 'check', round, name: result.name, command: result.command, passed: result.passed, exitCode: result.exitCode, timedOut: result.timedOut, durationMs: result.durationMs, output: result.output });
    results.push(result);
  }
  return results;
}

/** The next user message after failing checks: each failure with its (capped) output. */
export function formatCheckFeedback(results: CheckResult[], round: number, rounds: number): string {
  const failures = results
    .filter((r) => !r.passed)
    .map((r) => {
      const how = r.timedOut ? 'timed out' : `exited ${r.exitCode ?? 'by a signal'}`;
      return `$ ${r.command}\n(${how})\n${r.output.trimEnd()}`;
    });
  return [
    `The ticket's checks failed (round ${round} of ${rounds + 1}). Fix the cause, then finish again.`,
    ...failures,
  ].join('\n\n');
}
