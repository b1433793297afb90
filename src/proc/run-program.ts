import { spawn } from 'node:child_process';

// A program run to its end with all of its output kept: for the harness's own short
// commands (git, the bubblewrap probe), whose output corral reads in full. The agent's
// commands, checks and hooks go through runCommand instead, which caps what it keeps.

export interface ProgramOptions {
  cwd?: string;
  /** The complete environment of the program; nothing is inherited. Default: corral's own. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed. Without it stdin is at EOF from the start. */
  input?: string;
  /** Killed (SIGKILL) after this long; `timedOut` then says so. */
  timeoutMs?: number;
  /** Run in a process group of its own, so a Ctrl-C in the terminal does not reach it. */
  detached?: boolean;
}

/** The same shape whether the program passed, failed or never started; never throws. */
export interface ProgramResult {
  /** Null when it was killed by a signal or could not start. */
  exitCode: number | null;
  signal: string | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  /** Why it could not start (no such program, no such cwd). */
  error?: string;
}

export function runProgram(file: string, args: string[], options: ProgramOptions = {}): Promise<ProgramResult> {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(file, args, {
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.env === undefined ? {} : { env: options.env }),
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
        detached: options.detached ?? false,
      });
    } catch (error) {
      resolve({ exitCode: null, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), timedOut: false, error: error instanceof Error ? error.message : String(error) });
      return;
    }
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout?.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk));
    if (options.input !== undefined && child.stdin) {
      // A program that exits without reading its input breaks the pipe; its exit code says the rest.
      child.stdin.on('error', () => undefined);
      child.stdin.end(options.input);
    }
    let timedOut = false;
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGKILL');
          }, options.timeoutMs);
    let startError: string | undefined;
    child.once('error', (error) => {
      startError = error.message;
    });
    // 'close' comes after the exit and after both pipes are drained, also after a failed start.
    child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
      clearTimeout(timer);
      resolve({
        exitCode: startError === undefined ? code : null,
        signal,
        stdout: Buffer.concat(stdout),
        stderr: Buffer.concat(stderr),
        timedOut,
        ...(startError === undefined ? {} : { error: startError }),
      });
    });
  });
}
