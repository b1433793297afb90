import type { ChalkInstance } from 'chalk';
import type { RunEvent } from './events.js';
import { formatDuration } from './summary.js';

/** One plain line per meaningful event, for stderr: readable in a terminal and in CI logs. */
export function formatProgress(ticketId: string, event: RunEvent, c: ChalkInstance): string | null {
  const tag = c.dim(`[${ticketId}]`);
  switch (event.type) {
    case 'policy': {
      // Headless runs say up front what will decide their calls.
      const counts = ['deny', 'ask', 'allow'].map((effect) => `${event.rules.filter((rule) => rule.effect === effect).length} ${effect}`).join(', ');
      return `${tag} policy: baseline hard limits + ${event.rules.length} rule${event.rules.length === 1 ? '' : 's'} (${counts}), default ${event.defaultEffect}`;
    }
    case 'worktree':
      return `${tag} worktree at ${event.baseCommit.slice(0, 12)}`;
    case 'setup':
      return `${tag} setup ${event.exitCode === 0 ? c.green('✔') : c.red('✘')} ${event.name} ${c.dim(formatDuration(event.durationMs))}`;
    case 'model_response': {
      const calls = event.content.flatMap((b) => (b.type === 'tool_use' ? [b.name] : []));
      return `${tag} step ${event.step} ${c.dim(`${event.stopReason}${calls.length ? `: ${calls.join(', ')}` : ''} · ${formatDuration(event.durationMs)}`)}`;
    }
    case 'decision':
      return event.effect === 'allow' ? null : `${tag} ${c.yellow(`${event.effect === 'deny' ? 'denied' : 'refused'} ${event.tool}`)} ${c.dim(`${event.rule}: ${event.reason}`)}`;
    case 'check':
      return `${tag} check ${event.passed ? c.green('✔') : c.red('✘')} ${event.name} ${c.dim(formatDuration(event.durationMs))}`;
    case 'fence':
      return `${tag} fence ${event.ok ? c.green('held') : c.red('violated')} (${event.verdicts.length} changed)`;
    default:
      return null;
  }
}
