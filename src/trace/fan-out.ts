import type { EmitEvent, RunEvent } from './events.js';

// A run's events, each to its fold and then to its reporters. Apart from events.ts, whose
// schemas only a trace's reader needs: a run loads none of them before its first request.

/**
 * Feeds each event to `fold` first, then fans it out: a fold that fails is a bug and
 * stops the run, where a failing reporter never does.
 */
export function foldAndFanOut(fold: { add(event: RunEvent): void }, ...subscribers: EmitEvent[]): EmitEvent {
  const fanned = fanOut(...subscribers);
  return (event) => {
    fold.add(event);
    fanned(event);
  };
}

/** Fans one event out to every subscriber; a failing reporter never breaks the run. */
function fanOut(...subscribers: EmitEvent[]): EmitEvent {
  return (event) => {
    for (const subscriber of subscribers) {
      try {
        subscriber(event);
      } catch {
        // Reporting is best effort; the run's result and exit code must not depend on it.
      }
    }
  };
}
