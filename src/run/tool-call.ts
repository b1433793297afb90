import { decideCall, refusalText, type Decision } from '../guard/decide.js';
import { resolveRealPath } from '../guard/resolve-paths.js';
import type { ToolUse } from '../agent/loop.js';
import type { EmitEvent } from '../report/events.js';
import { parseToolCall } from '../tools/index.js';
import type { ToolContext, ToolOutput } from '../tools/types.js';
import type { CallRecord } from './result.js';

export interface ToolCallLedger {
  calls: number;
  denied: CallRecord[];
  asked: CallRecord[];
  streak: RefusalStreak;
}

/**
 * Counts turns in a row in which the guard refused every call, so a run that keeps
 * hitting the policy stops (blocked) instead of burning its budget. Invalid calls are a
 * model's slip, not a policy verdict, and count neither way.
 */
export class RefusalStreak {
  turns = 0;
  private allowed = 0;
  private refused = 0;

  noteAllowed(): void {
    this.allowed += 1;
  }

  noteRefused(): void {
    this.refused += 1;
  }

  /** Closes the turn's tally; returns how many turns in a row were wholly refused. */
  endTurn(): number {
    if (this.allowed > 0) this.turns = 0;
    else if (this.refused > 0) this.turns += 1;
    this.allowed = 0;
    this.refused = 0;
    return this.turns;
  }
}

/** One call end to end: parse, resolve paths, decide, then run only what was allowed. */
export async function runToolCall(
  use: ToolUse,
  step: number,
  context: ToolContext,
  emit: EmitEvent,
  ledger: ToolCallLedger,
): Promise<ToolOutput> {
  ledger.calls += 1;
  emit({ type: 'tool_call', step, id: use.id, tool: use.name, input: use.input });
  const started = performance.now();
  const finish = (output: ToolOutput): ToolOutput => {
    emit({
      type: 'tool_result',
      step,
      id: use.id,
      tool: use.name,
      isError: output.isError,
      bytes: Buffer.byteLength(output.content),
      durationMs: Math.round(performance.now() - started),
    });
    return output;
  };

  const parsed = parseToolCall(use.name, use.input);
  if (!parsed.ok) {
    const record = { step, tool: use.name, effect: 'deny' as const, rule: 'tool.invalid-call', reason: parsed.error, call: describeCall(use) };
    ledger.denied.push(record);
    emit({ type: 'decision', step, id: use.id, tool: use.name, effect: 'deny', rule: record.rule, reason: record.reason, paths: [] });
    return finish({ content: parsed.error, isError: true });
  }

  const tool = parsed.tool;
  let resolvedPaths: string[] = [];
  let decision: Decision;
  try {
    resolvedPaths = await Promise.all(tool.paths(parsed.input).map((p: string) => resolveRealPath(p, context.worktree)));
    decision = decideCall({ tool: tool.name, resolvedPaths }, context.worktree);
  } catch (error) {
    // A path that cannot be resolved cannot be judged: deny, never guess.
    const message = error instanceof Error ? error.message : String(error);
    decision = { effect: 'deny', rule: 'placeholder.unresolvable-path', reason: `cannot resolve the path: ${message}` };
  }
  emit({ type: 'decision', step, id: use.id, tool: use.name, ...decision, paths: resolvedPaths });
  if (decision.effect !== 'allow') {
    // No approver yet: an ask is refused, never allowed (fail closed).
    const record = { step, tool: use.name, ...decision, call: describeCall(use) };
    (decision.effect === 'ask' ? ledger.asked : ledger.denied).push(record);
    ledger.streak.noteRefused();
    return finish({ content: refusalText(decision), isError: true });
  }

  ledger.streak.noteAllowed();
  try {
    return finish(await tool.execute(parsed.input, context));
  } catch (error) {
    return finish({ content: `${tool.name} failed: ${error instanceof Error ? error.message : String(error)}`, isError: true });
  }
}

/** `Read(src/a.ts)`, `Bash(npm test)`: the call as a person would name it, cut short. */
export function describeCall(use: ToolUse): string {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const main = input.command ?? input.file_path ?? input.pattern ?? input.path ?? '';
  const text = String(main).replace(/\s+/g, ' ');
  return `${use.name}(${text.length > 120 ? `${text.slice(0, 117)}...` : text})`;
}
