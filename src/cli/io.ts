/** The process's streams and environment, handed in so tests can run the CLI in-process. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C / SIGTERM; main wires process signals when absent. */
  interrupt?: AbortSignal;
}

const quieted = new WeakSet<NodeJS.WritableStream>();

/**
 * A reader that went away (`corral run --json | head`) ends what corral prints, not the
 * run: without a listener Node throws the EPIPE and exits 1, the code for "checks failed",
 * before the batch has finished and cleaned up. The run goes on to its own exit code;
 * any other write error still throws.
 */
export function endOutputQuietlyOnClosedPipe(stream: NodeJS.WritableStream): void {
  if (quieted.has(stream)) return;
  quieted.add(stream);
  stream.on('error', (error: NodeJS.ErrnoException) => {
    // EIO: the terminal is gone (a closed window, a dropped SSH session: SIGHUP).
    if (error.code === 'EPIPE' || error.code === 'EIO') return;
    throw error;
  });
}
