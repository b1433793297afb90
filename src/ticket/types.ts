import type { PolicyFile } from '../policy/schema.js';

/** A command the harness runs (setup or check), normalised from a string or an object. */
export interface TicketCommand {
  /** Shown in summaries; defaults to the command itself. */
  name: string;
  /** A bash command line, run with `bash -c` in the worktree root. */
  run: string;
  timeoutMs: number;
}

export interface TicketBudget {
  steps: number;
  tokens: number;
  minutes: number;
  usd?: number;
}

export type EnvChanges = Record<string, string | null | true>;

export type SandboxMode = 'bwrap' | 'none' | 'auto';

/** Who works the ticket: corral's own loop, or an agent CLI run under corral's guard. */
export type AgentKind = 'corral' | 'claude-code' | 'codex';

/** A ticket after validation and normalisation: paths absolute, defaults filled in. */
export interface Ticket {
  /** Absolute path of the ticket file. */
  file: string;
  id: string;
  title?: string;
  /** Absolute path of the top directory of the git repository to work on. */
  repo: string;
  /** The commit-ish as written (default `HEAD`). */
  base: string;
  /**
   * The commit `base` named when the ticket was loaded and checked. A run uses it, so every
   * ticket of a batch starts from the commit that was checked, however long the batch takes.
   */
  baseCommit?: string;
  task: string;
  allow: string[];
  forbid: string[];
  setup: TicketCommand[];
  checks: TicketCommand[];
  budget: TicketBudget;
  /** A model id, `replay:<absolute path>`, or undefined for the default model. */
  model?: string;
  /** Who works the ticket (the ticket's, else `--agent` or the config's, else corral's own loop). */
  agent: AgentKind;
  checkRounds: number;
  allowEmpty: boolean;
  /** Extra guard rules for this ticket, as written; enforced once the guard lands. */
  policy?: PolicyFile;
  labels: string[];
  /**
   * How the commands' environment differs from corral's own for them: a name to its
   * value, `null` to unset it (also one corral sets), `true` to pass it through from
   * corral's environment. Config's entries come first; the ticket's win.
   */
  env: EnvChanges;
  sandbox: SandboxMode;
  /** Whether the ticket or a config named the sandbox (unattended runs need one, or a choice). */
  sandboxChosen: boolean;
  /** Folders outside the worktree the sandbox shows read-only (as written: `~/x` or absolute). */
  sandboxRead: string[];
  /** Secret-named worktree files the agent may read (worktree-relative). */
  sandboxExpose: string[];
  /** A bubblewrap for each command instead of one per run with a supervisor (`sandbox.per_command`); absent: one per run. */
  sandboxPerCommand?: boolean;
  /** Whether the agent's Bash calls and the checks get the network (`network: true`). */
  network: boolean;
  /** Whether the repository's AGENTS.md and CLAUDE.md go into the system prompt (absent: they do). */
  instructions?: boolean;
  /** Whether setup commands get the network: yes, unless `network: {setup: false}`. */
  setupNetwork: boolean;
  /** The ticket's `context`, when it has one. */
  context?: TicketContext;
  /** What the ticket file itself set, so config defaults fill only the rest. */
  given: { budget: Partial<TicketBudget>; sandbox?: SandboxMode; sandboxPerCommand?: boolean; agent?: AgentKind };
}

/** How the conversation is kept within the model's context window (`context` in a ticket). */
export interface TicketContext {
  /** The context window in tokens; absent: the model family's. */
  window?: number;
  /** Tool results kept whole once older ones are cleared. */
  keepToolResults?: number;
}

/** The window for a model corral does not know, safe for every current Claude model. */
export const DEFAULT_CONTEXT_WINDOW = 200_000;
/**
 * The smallest window a ticket may name. No real model is this small; a window below the
 * system prompt and tools (about 3,000 tokens) only makes every request an edited one,
 * which a test or a replay may want.
 */
export const MIN_CONTEXT_WINDOW = 1_024;
/** Tool results kept whole, newest first, once old ones are cleared (the API's own default keeps 3). */
export const DEFAULT_KEEP_TOOL_RESULTS = 5;

export const DEFAULT_BUDGET: TicketBudget = { steps: 50, tokens: 2_000_000, minutes: 30 };
export const DEFAULT_CHECK_ROUNDS = 2;
export const DEFAULT_COMMAND_TIMEOUT_MS = 10 * 60 * 1000;
