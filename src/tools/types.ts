import type { CallLocation } from '../trace/records.js';
import type { z } from 'zod';
import type { CommandSandbox } from '../proc/run-command.js';

export const TOOL_NAMES = ['Bash', 'Read', 'Write', 'Edit', 'Glob', 'Grep'] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/** What a call does to the world; the guard and the trace key on it. */
export type ToolKind = 'read' | 'search' | 'edit' | 'execute';

/** Everything a tool needs from the run, handed in explicitly. */
export interface ToolContext {
  /** Absolute, real path of the worktree root; relative paths resolve against it. */
  worktree: string;
  /** The complete environment for processes the tool starts (nothing inherited). */
  env: Record<string, string>;
  signal: AbortSignal;
  /** Bytes of output a tool may return before it is cut (head and tail kept). */
  outputCap: number;
  /** Default and maximum timeout of a Bash call, in milliseconds. */
  bashTimeoutMs: number;
  bashMaxTimeoutMs: number;
  /** Where Bash commands run (the run's sandbox); absent, they run as they are. */
  sandbox?: CommandSandbox;
  /** The guard knows that what this call starts stays in its process group (guard/facts.ts `staysInProcessGroup`). */
  staysInGroup?: boolean;
  /**
   * Whether anything reads `ToolOutput.response` (a PostToolUse hook): without a reader,
   * Bash keeps its output once, interleaved, and not also stdout and stderr apart.
   */
  wantsResponse?: boolean;
}

/** A place a call touches: declared by its tool, judged by the guard. */
export type ToolLocation = CallLocation;

/** What goes back to the model as a tool_result. */
export interface ToolOutput {
  content: string;
  isError: boolean;
  /**
   * The call's result as an object in the shape Claude Code gives its PostToolUse hooks as
   * `tool_response` (Bash: stdout, stderr, interrupted, isImage; Write: type, filePath,
   * content, …), so a hook written for it reads the same fields here. Absent when the call
   * failed before it did anything.
   */
  response?: Record<string, unknown>;
}

export interface ToolDefinition<Input = unknown> {
  name: ToolName;
  description: string;
  kind: ToolKind;
  /** One schema serves the model's input_schema and the runtime parse. */
  input: z.ZodType<Input>;
  /**
   * Where the call reads, writes or walks, resolved from `base` (the worktree root) exactly
   * as `execute` will resolve them, before anything runs: the guard judges these paths,
   * so the tool and the guard can never disagree on which file a call means.
   */
  locations(input: Input, base: string): ToolLocation[];
  /** Runs the call. Failures the model can recover from are returned with isError, never thrown. */
  execute(input: Input, ctx: ToolContext): Promise<ToolOutput>;
}
