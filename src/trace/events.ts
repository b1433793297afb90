import type { TokenUsage, TurnBlock } from './records.js';
import type { Effect } from './records.js';
import type { FenceVerdict } from './records.js';

/** What happens during one run, in order. Reporters and the trace writer consume these. */
export type RunEvent =
  | { type: 'run_start'; runId: string; ticket: { id: string; file: string; title?: string }; model: string; runDir: string; corral: string; configDigest: string }
  | { type: 'policy'; rules: { id: string; effect: string; scope: string }[]; defaultEffect: string }
  | { type: 'worktree'; dir: string; baseCommit: string }
  | { type: 'sandbox'; kind: 'bwrap' | 'none'; network: boolean; /** Without bubblewrap: the child subreaper that ends a command's processes, or none. */ reaper?: 'perl' | 'python3' | 'none'; warning?: string }
  | { type: 'secrets_masked'; masked: string[]; exposed: string[] }
  | { type: 'setup'; name: string; exitCode: number | null; timedOut: boolean; durationMs: number; output: string }
  | { type: 'model_request'; step: number; messages: number; bytes: number }
  | { type: 'model_response'; step: number; stopReason: string; usage: TokenUsage; content: TurnBlock[]; durationMs: number }
  | { type: 'tool_call'; step: number; id: string; tool: string; input: unknown }
  | { type: 'decision'; step: number; id: string; tool: string; effect: Effect; rule: string; scope: string; reason: string; source?: string; commands: string[][]; paths: string[] }
  | { type: 'run_gate'; effect: Effect; rule: string; scope: string; reason: string; source?: string; approved?: boolean }
  | { type: 'approval'; step: number; id: string; tool: string; rule: string; approved: boolean; by: string; for?: 'once' | 'run' }
  | { type: 'hook'; step: number; event: string; command: string; exitCode: number | null; timedOut: boolean; durationMs: number; blocked: boolean; stderr: string }
  | { type: 'tool_result'; step: number; id: string; tool: string; isError: boolean; bytes: number; durationMs: number }
  | { type: 'check'; round: number; name: string; passed: boolean; exitCode: number | null; durationMs: number; output: string }
  | { type: 'fence'; ok: boolean; verdicts: FenceVerdict[] }
  | { type: 'host'; ok: boolean; differences: string[] }
  | { type: 'end'; status: string; exitCode: number; reason: string };

export type EmitEvent = (event: RunEvent) => void;

/** Fans one event out to every subscriber; a failing reporter never breaks the run. */
export function fanOut(...subscribers: EmitEvent[]): EmitEvent {
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
