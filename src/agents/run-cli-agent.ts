import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { costUsd as priceTurn, type PriceTable } from '../config/prices.js';
import type { CommandSandbox } from '../proc/run-command.js';
import { trackLeftover } from '../proc/leftovers.js';
import type { EmitEvent } from '../trace/events.js';
import type { Outcome } from '../trace/outcome.js';
import type { BudgetKind, TokenUsage } from '../trace/records.js';
import { traceOutput } from '../trace/write.js';
import { redactSecrets } from '../text/redact.js';
import type { AgentCli } from './find-cli.js';
import { judgeAgentCall } from './guard-hook.js';
import { serveGuard } from './guard-socket.js';
import { GUARD_SOCKET_ENV, type CorralCall, type HookAnswer } from './hook-protocol.js';
import type { AgentDriver } from './launch.js';
import type { AgentStreamEvent, StreamReader } from './stream.js';

/** How an agent CLI's run ends: the outcomes that carry the agent's last words. */
export type CliAgentOutcome = Extract<Outcome, { finalText: string }> | Extract<Outcome, { kind: 'internal_error' }>;

/** What the run around the agent answers: judging a call, the Stop hooks, the checks, the budget. */
export interface CliAgentSite {
  driver: AgentDriver;
  cli: AgentCli;
  worktree: string;
  /** Read-only inside the sandbox: the agent's settings and the guard socket. */
  controlDir: string;
  /** Writable, private to the run: the agent's home, config and sessions. */
  stateDir: string;
  /** The tools' environment (what the agent's commands get). */
  env: Record<string, string>;
  /** How the agent reaches its model API (modelAccess in the run): variables only the CLI needs. */
  modelEnv: Record<string, string>;
  /** The CLI's argv as it must start to reach its API (under the model proxy's bridge), before the sandbox wraps it. */
  modelCommand(argv: string[]): string[];
  /** The API base to write into the agent's config, for a CLI that reads no variable for it (Codex). */
  apiBaseUrl?: string;
  sandbox: CommandSandbox;
  /** Whether `sandbox` is a real one (bubblewrap), which replaces the agent's own. */
  confined: boolean;
  /** The PreToolUse hook command, as a shell command line. */
  hookCommand: string;
  system: string;
  task: string;
  model?: string;
  checkRounds: number;
  interrupt: AbortSignal;
  /** How long the agent may still take, by the ticket's minutes. */
  remainingMs: number;
  minutes: number;
  emit: EmitEvent;
  prices: PriceTable;
  /** Judges one of corral's own calls (events written, asks answered); `stop` says the run must end (too many refusals, a hook's halt). */
  judge(call: CorralCall, id: string, step: number, signal: AbortSignal): Promise<HookAnswer & { stop?: string }>;
  budget: {
    /** A turn's tokens and price, and its step. */
    onTurn(usage: TokenUsage, costUsd: number | null): void;
    /** The first budget spent past its limit (steps: more turns than allowed), or null. */
    exceeded(): { which: BudgetKind; detail: string } | null;
    readonly steps: number;
  };
  stopHooks(active: boolean, step: number, signal: AbortSignal): Promise<{ blocked: boolean; reason: string; halt?: string }>;
  checks(round: number, signal: AbortSignal): Promise<{ passed: boolean; feedback: string }>;
}

/** Claude Code's tools that act on the machine: one of their results without a judged call means the hook was bypassed. */
const GUARDED_CLAUDE_CODE_TOOLS = new Set(['Bash', 'Read', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'Glob', 'Grep', 'LS', 'WebFetch', 'WebSearch']);

/** Why corral ended the agent's process before the agent did. */
type Stop = { kind: 'budget'; which: BudgetKind; detail: string } | { kind: 'blocked'; reason: string } | { kind: 'interrupted' };

/** What one start of the CLI came to. */
interface Session {
  result?: Extract<AgentStreamEvent, { kind: 'result' }>;
  sessionId?: string;
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
  startError?: string;
}

const STDERR_TAIL = 4_000;
/** How long the agent's process group has after SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 3_000;

/**
 * Runs the agent CLI on the ticket, in the worktree, inside the run's sandbox, with every
 * tool call judged by corral through the guard socket; then the Stop hooks and the checks
 * as for corral's own loop, failures sent back by resuming the agent's session. Every way
 * it ends is an explicit outcome.
 */
export async function runCliAgent(site: CliAgentSite): Promise<CliAgentOutcome> {
  const { emit, driver } = site;
  const deadline = AbortSignal.timeout(Math.max(0, site.remainingMs));
  const signal = AbortSignal.any([site.interrupt, deadline]);
  let stop: Stop | undefined;
  let finalText = '';
  // Tool calls judged, by tool_use id, for the results the stream reports later.
  const judged = new Map<string, { tool: string; step: number; at: number; allowed?: boolean; answered?: boolean }>();
  // A result the stream names by an id of its own (Codex's items) is the oldest allowed call still without one.
  const callOf = (id: string): [string, { tool: string; step: number; at: number }] | undefined => {
    for (const key of [id, `${id}#1`]) {
      const call = judged.get(key);
      if (call !== undefined) return [key, call];
    }
    // Claude Code names every result by its call's id: one it does not know is an internal tool's.
    if (driver.kind !== 'codex') return undefined;
    for (const [key, call] of judged) if (call.allowed === true && call.answered !== true) return [key, call];
    return undefined;
  };
  // Tool calls the model made, by id, from its turns: to tell a call the guard never saw.
  const called = new Map<string, string>();
  let current: { end(): void } | undefined;
  // The stream of the CLI now running, and what is done with each of its events.
  let reading: { reader: StreamReader; dispatch(events: AgentStreamEvent[]): void } | undefined;
  const stopWith = (why: Stop): void => {
    stop ??= why;
    current?.end();
  };
  signal.addEventListener('abort', () => stopWith(site.interrupt.aborted ? { kind: 'interrupted' } : { kind: 'budget', which: 'minutes', detail: `${site.minutes} minute limit reached` }), { once: true });

  await mkdir(site.controlDir, { recursive: true });
  await mkdir(site.stateDir, { recursive: true, mode: 0o700 });
  const socketPath = path.join(site.controlDir, 'guard.sock');
  const server = await serveGuard(socketPath, async (request): Promise<HookAnswer> => {
    if (stop !== undefined || signal.aborted) return { effect: 'deny', reason: 'corral: the run is ending; no more calls run' };
    // The turn that asked for the call is over: recorded (and counted) before its call.
    if (reading !== undefined) reading.dispatch(reading.reader.flush());
    if (stop !== undefined) return { effect: 'deny', reason: 'corral: the run is ending; no more calls run' };
    // A call is made within the turn that asked for it: that turn's step.
    const step = Math.max(1, site.budget.steps);
    const exceeded = site.budget.exceeded();
    if (exceeded !== null) {
      stopWith({ kind: 'budget', ...exceeded });
      return { effect: 'deny', reason: `corral: budget exhausted (${exceeded.detail}); the run is ending` };
    }
    let halt: string | undefined;
    const answer = await judgeAgentCall(driver.kind, request.call, async (part, index, of) => {
      const id = of === 1 ? request.call.toolUseId : `${request.call.toolUseId}#${index + 1}`;
      judged.set(id, { tool: part.tool, step, at: performance.now() });
      const decided = await site.judge(part, id, step, signal);
      judged.get(id)!.allowed = decided.effect === 'allow';
      halt ??= decided.stop;
      return { effect: decided.effect, reason: decided.reason };
    });
    if (halt !== undefined) {
      // Answered first, so the agent is told; then its process ends.
      setImmediate(() => stopWith({ kind: 'blocked', reason: halt! }));
    }
    return answer;
  });

  try {
    let prompt = site.task;
    let sessionId: string | undefined;
    let failedRounds = 0;
    let stopHookActive = false;
    for (;;) {
      const session = await runSession(site, { prompt, ...(sessionId === undefined ? {} : { resume: sessionId }) }, (r) => (reading = r), (event) => {
        switch (event.kind) {
          case 'session':
            emit({ type: 'agent', kind: driver.kind, cli: site.cli.file, version: site.cli.version, sessionId: event.sessionId });
            return;
          case 'turn': {
            const step = site.budget.steps + 1;
            emit({ type: 'model_request', step, messages: step, bytes: 0 });
            // Priced as the model the stream names, else as the one the run asked for.
            const cost = priceTurn(event.model, event.usage, site.prices) ?? (site.model === undefined ? null : priceTurn(site.model, event.usage, site.prices));
            site.budget.onTurn(event.usage, cost);
            emit({ type: 'model_response', step, stopReason: event.stopReason, usage: event.usage, content: event.content, durationMs: 0, costUsd: cost });
            for (const block of event.content) if (block.type === 'tool_use') called.set(block.id, block.name);
            const text = event.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim();
            if (text) finalText = text;
            // Tokens and dollars are known once a turn is done: past the budget, nothing more is asked for.
            const exceeded = site.budget.exceeded();
            if (exceeded !== null) stopWith({ kind: 'budget', ...exceeded });
            return;
          }
          case 'tool_result': {
            const found = callOf(event.id);
            if (found === undefined) {
              // A call that ran without corral's guard (its hook skipped, untrusted or turned off): fail closed.
              if (event.declined !== true && (driver.kind === 'codex' || GUARDED_CLAUDE_CODE_TOOLS.has(called.get(event.id) ?? ''))) {
                stopWith({ kind: 'blocked', reason: `the ${driver.kind} CLI ran a ${called.get(event.id) ?? 'tool'} call that corral's guard never judged (its PreToolUse hook did not run); the run was stopped` });
              }
              return;
            }
            const [id, call] = found;
            judged.set(id, { ...call, answered: true });
            emit({ type: 'tool_result', step: call.step, id, tool: call.tool, isError: event.isError, bytes: Buffer.byteLength(event.content), durationMs: Math.round(performance.now() - call.at), output: traceOutput(event.content, redactSecrets) });
            return;
          }
          case 'result':
            if (event.text.trim()) finalText = event.text.trim();
            return;
        }
      }, (handle) => {
        current = handle;
        if (stop !== undefined) handle.end();
      });
      current = undefined;
      reading = undefined;
      sessionId = session.sessionId ?? sessionId;
      if (stop !== undefined) return stopped(stop, finalText);
      const ended = sessionOutcome(site, session, finalText);
      if (ended !== undefined) return ended;

      // The agent says it is done: the Stop hooks, then the checks, as for corral's own loop.
      const step = site.budget.steps;
      const stopAnswer = await site.stopHooks(stopHookActive, step, signal);
      if (stop !== undefined) return stopped(stop, finalText);
      if (stopAnswer.halt !== undefined) return { kind: 'blocked', reason: stopAnswer.halt, finalText };
      if (stopAnswer.blocked && !stopHookActive && sessionId !== undefined) {
        stopHookActive = true;
        prompt = stopAnswer.reason;
        continue;
      }
      stopHookActive = false;
      const round = await site.checks(failedRounds + 1, signal);
      if (stop !== undefined) return stopped(stop, finalText);
      if (round.passed) return { kind: 'finished', finalText };
      failedRounds += 1;
      if (failedRounds > site.checkRounds) return { kind: 'checks_failed', finalText, rounds: failedRounds };
      if (sessionId === undefined) return { kind: 'internal_error', reason: `the ${driver.kind} CLI reported no session to resume, so the failing checks could not go back to it` };
      prompt = round.feedback;
    }
  } finally {
    await server.close();
  }
}

function stopped(stop: Stop, finalText: string): CliAgentOutcome {
  switch (stop.kind) {
    case 'interrupted':
      return { kind: 'interrupted', finalText };
    case 'blocked':
      return { kind: 'blocked', reason: stop.reason, finalText };
    case 'budget':
      return { kind: 'budget_exhausted', exceeded: { which: stop.which, detail: stop.detail }, finalText };
  }
}

/** How a session the agent ended itself ends the run; undefined when the agent finished its turn (checks next). */
function sessionOutcome(site: CliAgentSite, session: Session, finalText: string): CliAgentOutcome | undefined {
  const name = site.driver.kind;
  if (session.startError !== undefined) return { kind: 'internal_error', reason: `the ${name} CLI could not start: ${session.startError}` };
  const { result } = session;
  if (result === undefined) {
    const how = session.exitCode === null ? `was killed by ${session.signal ?? 'a signal'}` : `exited ${session.exitCode}`;
    return { kind: 'internal_error', reason: `the ${name} CLI ${how} without a result${session.stderrTail ? `: ${lastLines(session.stderrTail)}` : ''}` };
  }
  if (result.refused) return { kind: 'refused', finalText };
  if (!result.ok) return { kind: 'model_error', message: `${name}: ${result.error ?? 'the session failed'}`, finalText };
  // A result that says success from a CLI that then failed is not trusted either.
  if (session.exitCode !== 0) return { kind: 'internal_error', reason: `the ${name} CLI exited ${session.exitCode ?? session.signal} after reporting success${session.stderrTail ? `: ${lastLines(session.stderrTail)}` : ''}` };
  return undefined;
}

function lastLines(text: string): string {
  return text.trim().split('\n').slice(-5).join(' | ');
}

/**
 * One start of the CLI, in its own process group inside the sandbox, until it exits.
 * `onHandle` gets the way to end it (the group: SIGTERM, then SIGKILL).
 */
async function runSession(
  site: CliAgentSite,
  start: { prompt: string; resume?: string },
  onReader: (reading: { reader: StreamReader; dispatch(events: AgentStreamEvent[]): void }) => void,
  onEvent: (event: AgentStreamEvent) => void,
  onHandle: (handle: { end(): void }) => void,
): Promise<Session> {
  const launch = site.driver.launch({
    prompt: start.prompt,
    system: site.system,
    ...(site.model === undefined ? {} : { model: site.model }),
    ...(start.resume === undefined ? {} : { resume: start.resume }),
    controlDir: site.controlDir,
    stateDir: site.stateDir,
    hookCommand: site.hookCommand,
    confined: site.confined,
    ...(site.apiBaseUrl === undefined ? {} : { apiBaseUrl: site.apiBaseUrl }),
  });
  for (const dir of launch.dirs) await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const file of launch.files) {
    await mkdir(path.dirname(file.path), { recursive: true });
    await writeFile(file.path, file.content, { mode: 0o600 });
  }
  const env = { ...site.env, ...site.modelEnv, ...launch.env, [GUARD_SOCKET_ENV]: path.join(site.controlDir, 'guard.sock') };
  const argv = site.sandbox.wrap(site.modelCommand([site.cli.file, ...launch.args]), site.worktree);
  const session: Session = { exitCode: null, signal: null, stderrTail: '' };
  const reader = site.driver.stream();
  return new Promise<Session>((resolve) => {
    let child;
    try {
      child = spawn(argv[0]!, argv.slice(1), { cwd: site.worktree, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    } catch (error) {
      resolve({ ...session, startError: error instanceof Error ? error.message : String(error) });
      return;
    }
    const pid = child.pid;
    const killGroup = (signalName: NodeJS.Signals): void => {
      if (pid === undefined) return;
      try {
        process.kill(-pid, signalName);
      } catch {
        // Already gone.
      }
    };
    // A corral that dies leaves no agent behind.
    const forget = trackLeftover(() => killGroup('SIGKILL'));
    let killTimer: NodeJS.Timeout | undefined;
    onHandle({
      end() {
        if (killTimer !== undefined) return;
        killGroup('SIGTERM');
        killTimer = setTimeout(() => killGroup('SIGKILL'), KILL_GRACE_MS);
        killTimer.unref();
      },
    });
    const handle = (events: AgentStreamEvent[]): void => {
      for (const event of events) {
        if (event.kind === 'session') session.sessionId = event.sessionId;
        if (event.kind === 'result') session.result = event;
        onEvent(event);
      }
    };
    onReader({ reader, dispatch: handle });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => handle(reader.push(line)));
    child.stderr.on('data', (chunk: Buffer) => {
      session.stderrTail = (session.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    child.once('error', (error) => {
      session.startError = error.message;
    });
    child.once('close', (code, signalName) => {
      clearTimeout(killTimer);
      forget();
      // Whatever else the group left behind goes with it.
      killGroup('SIGKILL');
      handle(reader.end());
      resolve({ ...session, exitCode: session.startError === undefined ? code : null, signal: signalName });
    });
  });
}
