import { cleanUpLeftoversNow } from '../proc/leftovers.js';

/** The signals that stop a run: Ctrl-C, a kill, and a closed terminal or dropped SSH session, all alike. */
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Turns the first SIGINT/SIGTERM/SIGHUP into an abort the run handles (patch kept,
 * worktree removed, exit 130); a second one exits at once, once every worktree's work is
 * saved as a patch and said where.
 */
export function interruptOnSignals(say: (line: string) => void = (line) => process.stderr.write(`\n${line}\n`)): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      // At once, but without leaving a registered worktree (its work saved first), a temp
      // dir, a lock or a command behind.
      for (const line of cleanUpLeftoversNow()) writeQuietly(`corral: ${line}\n`);
      // The signals' own defaults back: an exit held up (a read stuck in the thread pool
      // is waited for) still ends on the next one.
      for (const signal of STOP_SIGNALS) process.removeAllListeners(signal);
      process.exit(130);
    }
    say(`corral: ${name}, stopping (again to quit at once)`);
    controller.abort(new Error(name));
  };
  for (const name of STOP_SIGNALS) process.on(name, onSignal);
  return {
    signal: controller.signal,
    dispose() {
      for (const name of STOP_SIGNALS) process.off(name, onSignal);
    },
  };
}

/** stderr may be a terminal that is gone (SIGHUP): what cannot be said is not said. */
function writeQuietly(text: string): void {
  try {
    process.stderr.write(text);
  } catch {
    // Nobody to tell; the patch is on disk all the same.
  }
}
