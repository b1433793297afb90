import { cleanUpLeftoversNow } from '../proc/leftovers.js';

/**
 * Turns the first SIGINT/SIGTERM into an abort the run handles (patch kept, worktree
 * removed, exit 130); a second one exits at once.
 */
export function interruptOnSignals(say: (line: string) => void = (line) => process.stderr.write(`\n${line}\n`)): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSignal = (name: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      // At once, but without leaving a registered worktree, a temp dir or a command behind.
      cleanUpLeftoversNow();
      process.exit(130);
    }
    say(`corral: ${name}, stopping (again to quit at once)`);
    controller.abort(new Error(name));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}
