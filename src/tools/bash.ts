import { z } from 'zod';
import { runCommand, type CommandResult } from '../proc/run-command.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './types.js';

const BashInput = z.strictObject({
  command: z.string().min(1).describe('The shell command to run (bash).'),
  timeout: z.number().int().min(1).optional().describe('Timeout in milliseconds.'),
  description: z.string().optional().describe('A few words saying what the command does, for the log.'),
});
export type BashInput = z.infer<typeof BashInput>;

export const bashTool: ToolDefinition<BashInput> = {
  name: 'Bash',
  description:
    'Run a shell command with bash in the repository root (every call starts there; `cd` does not carry over). ' +
    'stdin is empty, so interactive commands will not wait for input. Returns stdout and stderr together, ' +
    'with the exit code when it is not 0; long output keeps its start and end. ' +
    'The command and everything it started are killed at the timeout. Use Read, Edit, Glob and Grep for files.',
  kind: 'execute',
  input: BashInput,
  // A command names its paths in its own words: the guard reads them from the parsed command.
  locations: () => [],
  execute: executeBash,
};

async function executeBash(input: BashInput, ctx: ToolContext): Promise<ToolOutput> {
  const timeoutMs = Math.min(input.timeout ?? ctx.bashTimeoutMs, ctx.bashMaxTimeoutMs);
  const result = await runCommand({
    command: input.command,
    cwd: ctx.worktree,
    env: ctx.env,
    timeoutMs,
    signal: ctx.signal,
    outputCap: ctx.outputCap,
    // Apart as well as together when a hook reads them (tool_response); the model reads them interleaved.
    separateStderr: ctx.wantsResponse ?? true,
    ...(ctx.sandbox ? { sandbox: ctx.sandbox } : {}),
    ...(ctx.staysInGroup ? { staysInGroup: true } : {}),
  });
  const response = { stdout: result.stdout ?? result.output, stderr: result.stderr ?? '', interrupted: result.timedOut || result.aborted, isImage: false };
  return { content: describeResult(result, timeoutMs), isError: !succeeded(result), response };
}

function succeeded(result: CommandResult): boolean {
  return result.exitCode === 0 && !result.timedOut && !result.aborted;
}

function describeResult(result: CommandResult, timeoutMs: number): string {
  const output = result.output.replace(/\n$/, '');
  const status = statusLine(result, timeoutMs);
  if (output === '') return status ?? '(no output)';
  return status === undefined ? output : `${output}\n\n${status}`;
}

function statusLine(result: CommandResult, timeoutMs: number): string | undefined {
  if (result.timedOut) return `Command timed out after ${formatMs(timeoutMs)} and was killed.`;
  if (result.aborted) return 'Command was interrupted and killed.';
  if (result.exitCode === null) return result.signal ? `Command was killed by ${result.signal}.` : 'Command did not run.';
  if (result.exitCode !== 0) return `exit code ${result.exitCode}`;
  return undefined;
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
