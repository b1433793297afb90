import v8 from 'node:v8';

/**
 * Keeps the young generation at its starting size for the life of a CLI process. V8 grows
 * it (up to 3 × 16 MB) when many objects survive, and a run's survivors are its
 * conversation, which stays anyway: the growth bought little but resident memory, and
 * every process a run spawns forks that memory, so spawns got slower too. Measured on 200
 * steps of 1 MB output each: 142 MB peak before, 100 MB after (docs/performance.md).
 * Only the CLI calls this; a library user's process keeps its own settings.
 */
export function tuneHeapForCli(): void {
  v8.setFlagsFromString('--semi-space-growth-factor=1');
}
