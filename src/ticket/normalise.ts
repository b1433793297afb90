import { envChanges, networkParts, sandboxParts, type TicketFile, type TicketFileCommand } from './schema.js';
import {
  DEFAULT_BUDGET,
  DEFAULT_CHECK_ROUNDS,
  DEFAULT_COMMAND_TIMEOUT_MS,
  type Ticket,
  type TicketCommand,
} from './types.js';

/** What the loader worked out from outside the validated fields. */
export interface TicketFacts {
  /** Absolute path of the ticket file. */
  file: string;
  /** `id` as written, or the one taken from the file name. */
  id: string;
  /** Top directory of the repository. */
  repo: string;
  /** The commit `base` named when the ticket was loaded. */
  baseCommit?: string;
  /** From `task`, or the Markdown body. */
  task: string;
  /** `model` with a replay path made absolute. */
  model?: string;
}

/** Builds the `Ticket` the run uses: defaults filled in, commands in one shape. */
export function normaliseTicket(fields: TicketFile, facts: TicketFacts): Ticket {
  const sandbox = sandboxParts(fields.sandbox);
  const network = networkParts(fields.network, fields.setup_network);
  return {
    file: facts.file,
    id: facts.id,
    title: fields.title,
    repo: facts.repo,
    base: fields.base ?? 'HEAD',
    ...(facts.baseCommit ? { baseCommit: facts.baseCommit } : {}),
    task: facts.task.trim(),
    allow: fields.allow,
    forbid: fields.forbid ?? [],
    setup: (fields.setup ?? []).map(normaliseCommand),
    checks: (fields.checks ?? []).map(normaliseCommand),
    budget: { ...DEFAULT_BUDGET, ...fields.budget },
    model: facts.model,
    agent: fields.agent ?? 'corral',
    checkRounds: fields.check_rounds ?? DEFAULT_CHECK_ROUNDS,
    allowEmpty: fields.allow_empty ?? false,
    policy: fields.policy,
    labels: fields.labels ?? [],
    env: envChanges(fields.env),
    sandbox: sandbox.mode ?? 'auto',
    sandboxChosen: sandbox.mode !== undefined,
    sandboxRead: sandbox.read,
    sandboxExpose: sandbox.expose,
    network: network.agent,
    setupNetwork: network.setup,
    instructions: fields.instructions ?? true,
    ...(fields.context ? { context: { ...(fields.context.window !== undefined ? { window: fields.context.window } : {}), ...(fields.context.keep_tool_results !== undefined ? { keepToolResults: fields.context.keep_tool_results } : {}) } } : {}),
    ...(sandbox.perCommand ? { sandboxPerCommand: true } : {}),
    given: { budget: { ...fields.budget }, ...(sandbox.mode ? { sandbox: sandbox.mode } : {}), ...(sandbox.perCommand === undefined ? {} : { sandboxPerCommand: sandbox.perCommand }), ...(fields.agent ? { agent: fields.agent } : {}) },
  };
}

function normaliseCommand(command: TicketFileCommand): TicketCommand {
  if (typeof command === 'string') return { name: command, run: command, timeoutMs: DEFAULT_COMMAND_TIMEOUT_MS };
  return {
    name: command.name ?? command.run,
    run: command.run,
    timeoutMs:
      command.timeout_seconds === undefined ? DEFAULT_COMMAND_TIMEOUT_MS : Math.ceil(command.timeout_seconds * 1000),
  };
}
