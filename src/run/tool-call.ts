import type { Decision } from '../guard/decide.js';
import { refusalText, type Guard, type Verdict } from '../guard/guard.js';
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
  guard: Guard,
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
    const record = { step, tool: use.name, effect: 'deny' as const, rule: 'tool.invalid-call', scope: 'baseline' as const, reason: parsed.error, call: describeCall(use) };
    ledger.denied.push(record);
    emit({ type: 'decision', step, id: use.id, tool: use.name, effect: 'deny', rule: record.rule, scope: record.scope, reason: record.reason, paths: [], commands: [] });
    return finish({ content: parsed.error, isError: true });
  }

  const tool = parsed.tool;
  let verdict: Verdict | undefined;
  let decision: Decision;
  try {
    verdict = await guard.decide(tool.name, parsed.input);
    decision = verdict.decision;
  } catch (error) {
    // A guard that cannot decide never lets the call through.
    const message = error instanceof Error ? error.message : String(error);
    decision = { effect: 'deny', rule: 'baseline.guard-error', scope: 'baseline', reason: `the guard could not decide: ${message}` };
  }
  emit({ type: 'decision', step, id: use.id, tool: use.name, ...decision, ...decisionFacts(verdict) });
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

/** The parsed commands and resolved paths a decision was made from, as the trace records them. */
function decisionFacts(verdict: Verdict | undefined): { commands: string[][]; paths: string[] } {
  if (verdict === undefined) return { commands: [], paths: [] };
  return {
    commands: verdict.facts.commands.map((command) => command.argv),
    paths: verdict.facts.paths.map((fact) => `${fact.access} ${fact.path ?? `${fact.given} (unknown)`}`),
  };
}

/** `Read(src/a.ts)`, `Bash(npm test)`: the call as a person would name it, cut short. */
export function describeCall(use: ToolUse): string {
  const input = (use.input ?? {}) as Record<string, unknown>;
  const main = input.command ?? input.file_path ?? input.pattern ?? input.path ?? '';
  const text = String(main).replace(/\s+/g, ' ');
  return `${use.name}(${text.length > 120 ? `${text.slice(0, 117)}...` : text})`;
}
