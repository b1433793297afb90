import type { ChalkInstance } from 'chalk';
import type { RunEvent } from '../trace/events.js';
import { formatDuration } from './summary.js';
import { makeVisible as v } from '../text/visible.js';

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
    case 'sandbox':
      if (event.warning) return `${tag} ${c.yellow(v(event.warning))}`;
      return `${tag} sandbox: ${event.kind === 'none' ? `none${event.reaper ? `, processes ended by a ${event.reaper} subreaper` : ''}` : `bwrap, ${event.network ? 'with' : 'no'} network${event.setupNetwork === undefined || event.setupNetwork === event.network ? '' : ` (setup ${event.setupNetwork ? 'with' : 'without'} it)`}`}`;
    case 'secrets_masked': {
      if (event.masked.length === 0 && event.exposed.length === 0) return null;
      const exposed = event.exposed.length > 0 ? `; exposed by the ticket: ${event.exposed.map(v).join(', ')}` : '';
      return `${tag} secret files masked: ${event.masked.length > 0 ? event.masked.map(v).join(', ') : 'none'}${exposed}`;
    }
    case 'context_cleared':
      return `${tag} step ${event.step} ${c.dim(`context: ${event.results} old tool result${event.results === 1 ? '' : 's'} cleared, ~${event.tokensBefore} → ~${event.tokensAfter} tokens of ${event.window}`)}`;
    case 'context_compacted':
      return `${tag} step ${event.step} ${c.dim(`context: ${event.turns} older turn${event.turns === 1 ? '' : 's'} compacted into a summary, ~${event.tokensBefore} → ~${event.tokensAfter} tokens`)}`;
    case 'setup':
      return `${tag} setup ${event.exitCode === 0 ? c.green('✔') : c.red('✘')} ${event.name} ${c.dim(formatDuration(event.durationMs))}`;
    case 'model_response': {
      const calls = event.content.flatMap((b) => (b.type === 'tool_use' ? [v(b.name)] : []));
      return `${tag} step ${event.step} ${c.dim(`${event.stopReason}${calls.length ? `: ${calls.join(', ')}` : ''} · ${formatDuration(event.durationMs)}`)}`;
    }
    case 'decision':
      return event.effect === 'allow' ? null : `${tag} ${c.yellow(`${event.effect === 'deny' ? 'denied' : 'asks about'} ${v(event.tool)}`)} ${c.dim(`${v(event.rule)}: ${v(event.reason)}`)}`;
    case 'approval': {
      const how = event.approved ? (event.by === 'remembered' ? 'approved (remembered for this run)' : `approved ${event.for === 'run' ? 'for this run' : 'once'}`) : event.by === 'unattended' ? 'refused (unattended)' : 'refused';
      return `${tag} ${event.approved ? c.green(how) : c.yellow(how)} ${v(event.tool)} ${c.dim(v(event.rule))}`;
    }
    case 'hook': {
      if (event.blocked) return `${tag} ${c.yellow(`${event.event} hook blocked`)} ${c.dim(`${v(event.command)}: ${v(event.stderr.trim().split('\n')[0] ?? '')}`)}`;
      if (event.exitCode === 0) return null;
      return `${tag} ${c.yellow(`${event.event} hook ${event.timedOut ? 'timed out' : `exited ${event.exitCode}`} (ignored)`)} ${c.dim(v(event.command))}`;
    }
    case 'run_gate':
      return `${tag} ${event.effect === 'deny' || !event.approved ? c.red('run.start refused') : c.green('run.start approved')} ${c.dim(`${event.rule}: ${event.reason}`)}`;
    case 'check':
      return `${tag} check ${event.passed ? c.green('✔') : c.red('✘')} ${event.name} ${c.dim(formatDuration(event.durationMs))}`;
    case 'host':
      return event.ok ? null : `${tag} ${c.red('host repository changed')} ${c.dim(v(event.differences.join('; ')))}`;
    case 'fence':
      return `${tag} fence ${event.ok ? c.green('held') : c.red('violated')} (${event.verdicts.length} changed)`;
    default:
      return null;
  }
}
