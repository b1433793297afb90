import { decideCall, refusalText } from '../guard/decide.js';
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
  /** Denied or refused calls since the last allowed one. */
  refusedInARow: number;
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
    ledger.refusedInARow += 1;
    emit({ type: 'decision', step, id: use.id, tool: use.name, effect: 'deny', rule: record.rule, reason: record.reason, paths: [] });
    return finish({ content: parsed.error, isError: true });
  }

  const tool = parsed.tool;
  const resolvedPaths = await Promise.all(tool.paths(parsed.input).map((p: string) => resolveRealPath(p, context.worktree)));
  const decision = decideCall({ tool: tool.name, kind: tool.kind, resolvedPaths }, context.worktree);
  emit({ type: 'decision', step, id: use.id, tool: use.name, ...decision, paths: resolvedPaths });
  if (decision.effect !== 'allow') {
    // No approver yet: an ask is refused, never allowed (fail closed).
    const record = { step, tool: use.name, ...decision, call: describeCall(use) };
    (decision.effect === 'ask' ? ledger.asked : ledger.denied).push(record);
    ledger.refusedInARow += 1;
    return finish({ content: refusalText(decision), isError: true });
  }

  ledger.refusedInARow = 0;
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
