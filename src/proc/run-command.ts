import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { statSync } from 'node:fs';
import { constants } from 'node:os';
import type { Readable } from 'node:stream';
import { spawn, type ChildProcess } from 'node:child_process';
import { trackLeftover } from './leftovers.js';
import { CappedOutput } from '../text/output-cap.js';
import { findSubreaper, fitsHelperSpec } from './subreaper.js';
import { fitsSupervisor, type SupervisedEnd, type Supervisor } from './supervisor.js';

// The one process runner: the Bash tool, ticket checks and setup commands all go
// through here, so timeouts, kills, output caps and the environment behave the same
// everywhere.

export interface RunCommandOptions {
  /** A shell string, run with `bash -c`. */
  command: string;
  cwd: string;
  /** The complete environment of the command; nothing is inherited from corral. */
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes of output kept (head and tail); the rest is counted and cut. */
  outputCap: number;
  /** Written to the command's stdin, which is then closed. Without it stdin is at EOF from the start. */
  input?: string;
  /** Also keep stdout and stderr apart, each capped at `outputCap`, in `stdout` and `stderr` of the result. */
  separateStderr?: boolean;
  /** Runs the command inside this sandbox (guard/sandbox); without it, as it is. */
  sandbox?: CommandSandbox;
  /**
   * Everything it starts stays in its process group (the guard knows each command, and
   * none detaches), so the group kill suffices and no subreaper process is started: where
   * starting a process is slow, one more a command is most of a step.
   */
  staysInGroup?: boolean;
}

/** What runCommand needs of a sandbox: the argv that runs `argv` in `cwd` inside it. */
export interface CommandSandbox {
  wrap(argv: string[], cwd: string): string[];
  /** The sandbox itself ends every process a command started when the command ends (a PID namespace). */
  containsProcesses?: boolean;
  /**
   * The sandbox started once for many commands (proc/supervisor.ts), for the view the
   * next command gets; without it, each command runs in a sandbox of its own (`wrap`).
   */
  supervisor?(): Supervisor;
}

/** The same shape for success, failure, timeout and abort; runCommand never throws for a failing command. */
export interface CommandResult {
  /** Null when the command was killed by a signal or could not start. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** stdout and stderr interleaved in arrival order, capped with a visible cut marker. */
  output: string;
  /** Only with `separateStderr`: stdout alone, capped. */
  stdout?: string;
  /** Only with `separateStderr`: stderr alone, capped; a failure to start is reported here too. */
  stderr?: string;
  totalBytes: number;
  durationMs: number;
}

/**
 * Once the main process has exited, how long to wait for its pipes to close. They only
 * stay open when a process escaped the process group (setsid) while holding them; we
 * stop reading then rather than wait for it forever.
 */
const PIPE_DRAIN_GRACE_MS = 2_000;

/**
 * How long the subreaper has to end a timed-out or aborted command and everything it
 * started before its process group is killed outright (which would orphan the rest).
 */
const SUBREAPER_STOP_GRACE_MS = 10_000;

export async function runCommand(options: RunCommandOptions): Promise<CommandResult> {
  const started = performance.now();
  const output = new CappedOutput(options.outputCap);
  // Hooks read a JSON answer from stdout and a reason from stderr, so they need them apart.
  const apart = options.separateStderr ? { stdout: new CappedOutput(options.outputCap), stderr: new CappedOutput(options.outputCap) } : undefined;
  const { signal } = options;
  // Without a sandbox that ends them, a command's processes are ended by a child subreaper
  // around it (src/tools/subreaper.ts), setsid daemons included; where none works, by the
  // process-group kill alone (the run says so in a warning).
  // Input is only given to hooks, which run unsandboxed; a sandbox that has one still runs such a command in a bubblewrap of its own.
  const supervised = options.input === undefined && options.sandbox?.supervisor !== undefined;
  const subreaper = supervised || options.sandbox?.containsProcesses || options.staysInGroup ? undefined : await findSubreaper();
  const reaped = subreaper !== undefined && subreaper.kind !== 'none';
  if (signal?.aborted) {
    const result: CommandResult = { exitCode: null, signal: null, timedOut: false, aborted: true, output: '', totalBytes: 0, durationMs: 0 };
    return apart ? { ...result, stdout: '', stderr: '' } : result;
  }
  // --norc: with `input`, stdin is a socket, and a bash built with SSH_SOURCE_BASHRC
  // (Debian, Ubuntu) then takes itself for an ssh session and sources ~/.bashrc.
  const bash = ['bash', '--norc', '-c', options.command];
  if (supervised) return runSupervised(options.sandbox!.supervisor!(), bash, options, started, output, apart);
  // Sandboxed, the process we start is bwrap; it leads the process group below, and its
  // PID namespace ends with the command, so the kills here reach everything inside too.
  const wrapped = options.sandbox ? options.sandbox.wrap(bash, options.cwd) : bash;
  const [file, ...args] = reaped ? subreaper.wrap(wrapped) : wrapped;
  const command = { argv: wrapped, cwd: options.cwd, env: options.env };
  // A helper started ahead takes the command when it can say how it went as spawn() would:
  // no input to give (its stdin is at EOF), a cwd that exists, nothing Node would refuse.
  const ready = reaped && options.input === undefined && subreaper.ready && fitsHelperSpec(command) && isDirectory(options.cwd) ? subreaper.ready : undefined;
  let subprocess: ChildProcess;
  try {
    subprocess = ready ? ready.run(command) : spawn(file!, args, {
      cwd: options.cwd,
      // The whole environment, as given: nothing is inherited from corral.
      env: options.env,
      // A command that reads stdin gets EOF at once (or after the input) instead of
      // hanging the run.
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      // The child leads its own process group, so one kill reaches everything it started
      // (under a subreaper, the subreaper alone: the command leads a group of its own).
      detached: true,
    });
  } catch (error) {
    // Arguments Node refuses before any process exists (a NUL byte in the command).
    const message = `failed to start: ${error instanceof Error ? error.message : String(error)}`;
    const result: CommandResult = { exitCode: null, signal: null, timedOut: false, aborted: false, output: message, totalBytes: 0, durationMs: Math.round(performance.now() - started) };
    return apart ? { ...result, stdout: '', stderr: message } : result;
  }
  if (options.input !== undefined && subprocess.stdin) {
    // A command that exits without reading its input closes the pipe under us (EPIPE):
    // that is the command's business, not a failure of the call.
    subprocess.stdin.on('error', () => undefined);
    subprocess.stdin.end(options.input);
  }

  const killGroup = (): void => signalProcess(subprocess.pid, -1, 'SIGKILL');
  // A subreaper killed outright would orphan what the command started, so it is asked
  // instead (SIGTERM: it kills the command and all that is left, then exits); its group
  // is killed only if it has not done so in time.
  let stopGrace: NodeJS.Timeout | undefined;
  const stop = (): void => {
    if (!reaped) return killGroup();
    signalProcess(subprocess.pid, 1, 'SIGTERM');
    stopGrace ??= setTimeout(killGroup, SUBREAPER_STOP_GRACE_MS);
  };
  // A second Ctrl-C exits corral at once; the command's processes must not outlive it.
  const forgetGroup = trackLeftover(reaped ? () => signalProcess(subprocess.pid, 1, 'SIGTERM') : killGroup);
  let exited = false;
  let timedOut = false;
  let aborted = false;
  let exitCode: number | null = null;
  let exitSignal: string | null = null;

  const timer = setTimeout(() => {
    if (exited) return;
    timedOut = true;
    stop();
  }, options.timeoutMs);
  const onAbort = (): void => {
    if (exited) return;
    aborted = true;
    stop();
  };
  signal?.addEventListener('abort', onAbort, { once: true });

  const collect = (stream: Readable | null, alone: CappedOutput | undefined): Readable[] => {
    if (stream === null) return [];
    stream.on('data', (chunk: Buffer) => {
      output.push(chunk);
      alone?.push(chunk);
    });
    // A pipe that breaks ends the output there; the exit status still says what happened.
    stream.on('error', () => undefined);
    return [stream];
  };
  const streams = [...collect(subprocess.stdout, apart?.stdout), ...collect(subprocess.stderr, apart?.stderr)];

  let drainTimer: NodeJS.Timeout | undefined;
  let startError: string | undefined;
  try {
    await new Promise<void>((resolve) => {
      subprocess.once('exit', (code: number | null, killedBy: NodeJS.Signals | null) => {
        exited = true;
        exitCode = code;
        exitSignal = killedBy;
        // A backgrounded grandchild (`sleep 1000 &`) would keep the pipes open and outlive
        // the call; the command is over when its main process is. (A subreaper has ended
        // them all before it exits; this kill then finds nothing.)
        clearTimeout(stopGrace);
        killGroup();
        drainTimer = setTimeout(() => {
          for (const stream of streams) stream.destroy();
        }, PIPE_DRAIN_GRACE_MS);
        drainTimer.unref();
        resolve();
      });
      // Without an exit event the command never ran (bad cwd, no bash).
      subprocess.once('error', (error: Error) => {
        if (exited) return;
        startError = error.message;
        for (const stream of streams) stream.destroy();
        resolve();
      });
    });
  } finally {
    clearTimeout(timer);
    clearTimeout(stopGrace);
    signal?.removeEventListener('abort', onAbort);
  }
  // Nothing the command started may survive the call. After an exit the group was
  // already killed; killing again later could hit a new group that reused the id.
  if (!exited) killGroup();
  forgetGroup();

  // Wait for the output already in flight before reading it.
  await Promise.all(streams.map((stream) => (stream.closed ? undefined : once(stream, 'close').catch(() => undefined))));
  clearTimeout(drainTimer);

  return commandResult({ exitCode, signal: exitSignal, timedOut, aborted }, startError, { output, apart, started });
}

/**
 * The result of a command from how it ended and what it printed, both ways of running one
 * alike; a failure to start is said after the output (and after stderr, kept apart).
 */
function commandResult(
  end: Pick<CommandResult, 'exitCode' | 'signal' | 'timedOut' | 'aborted'>,
  startError: string | undefined,
  { output, apart, started }: { output: CappedOutput; apart: { stdout: CappedOutput; stderr: CappedOutput } | undefined; started: number },
): CommandResult {
  const withStartError = (text: string): string =>
    startError === undefined ? text : `${text}${text && !text.endsWith('\n') ? '\n' : ''}failed to start: ${startError}`;
  const result: CommandResult = { ...end, output: withStartError(output.text()), totalBytes: output.totalBytes, durationMs: Math.round(performance.now() - started) };
  return apart ? { ...result, stdout: apart.stdout.text(), stderr: withStartError(apart.stderr.text()) } : result;
}

/**
 * A command run by the run's sandbox supervisor: the same timeout, interrupt, output and
 * result as a command of its own, and the supervisor ends everything it started before it
 * reports its end. A supervisor that fails throws an InternalError (exit 70): the run
 * cannot say what its commands did.
 */
async function runSupervised(
  supervisor: Supervisor,
  argv: string[],
  options: RunCommandOptions,
  started: number,
  output: CappedOutput,
  apart: { stdout: CappedOutput; stderr: CappedOutput } | undefined,
): Promise<CommandResult> {
  const command = { argv, cwd: options.cwd, env: options.env };
  let end: SupervisedEnd;
  let timedOut = false;
  let aborted = false;
  if (!fitsSupervisor(command)) {
    // What spawn() refuses the same way: exec takes no NUL.
    end = { kind: 'error', message: 'the command, its cwd or its environment holds a NUL byte' };
  } else {
    const run = supervisor.run(command, (stream, chunk) => {
      output.push(chunk);
      apart?.[stream].push(chunk);
    });
    let ended = false;
    const timer = setTimeout(() => {
      if (ended) return;
      timedOut = true;
      run.kill();
    }, options.timeoutMs);
    const onAbort = (): void => {
      if (ended) return;
      aborted = true;
      run.kill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      end = await run.done;
    } finally {
      ended = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }
  // As a bubblewrap of its own reports them: a command a signal killed exits 128+N; one
  // killed for its timeout or the interrupt was killed (SIGKILL) whole. Without a sandbox,
  // as spawn() does: no exit code and the signal's name.
  const killedBy = end.kind === 'signal' && supervisor.unconfined ? signalName(end.signal) : undefined;
  return commandResult(
    {
      exitCode: end.kind === 'exit' ? end.code : end.kind === 'signal' && killedBy === undefined ? 128 + end.signal : null,
      signal: end.kind === 'killed' ? 'SIGKILL' : (killedBy ?? null),
      timedOut,
      aborted,
    },
    end.kind === 'error' ? end.message : undefined,
    { output, apart, started },
  );
}

/** The name of signal number `n` (SIGTERM for 15), where Node knows it. */
function signalName(n: number): string | undefined {
  return Object.entries(constants.signals).find(([, number]) => number === n)?.[0];
}

/** Sends `signal` to the process `pid` (`sign` 1) or to its process group (`sign` -1). */
function signalProcess(pid: number | undefined, sign: 1 | -1, signal: 'SIGKILL' | 'SIGTERM'): void {
  if (pid === undefined) return;
  try {
    process.kill(sign * pid, signal);
  } catch (error) {
    // ESRCH: the group is already gone, as it is after most commands. EPERM: the id now
    // belongs to someone else's group; it is not ours to kill. Either way there is nothing
    // left of ours.
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ESRCH' || code === 'EPERM') return;
    throw new Error(`could not signal ${sign < 0 ? 'process group' : 'process'} ${pid}: ${code ?? String(error)}`);
  }
}

function isDirectory(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
