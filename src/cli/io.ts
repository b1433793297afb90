/** The process's streams and environment, handed in so tests can run the CLI in-process. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  /** Aborted on Ctrl-C / SIGTERM; main wires process signals when absent. */
  interrupt?: AbortSignal;
}
