// The SDK bench splits a step into the parts the trace's times show. The split must leave
// out a run's start and end (the workspace and the parser's start fall in the first step)
// and count only whole steps, or the parts would not add up to what a step costs.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { stepPartsOf, tempDir } from '../../bench/lib.mjs';

let scratch: { dir: string; dispose(): void };
beforeAll(() => {
  scratch = tempDir('step-parts');
});
afterAll(() => scratch.dispose());

/** A run of `steps` Bash steps whose parts take these milliseconds; the first step takes `firstExtra` more in its command. */
function runsDirOf(label: string, steps: number, parts: { model: number; guard: number; command: number; rest: number }, firstExtra = 0): string {
  const runsDir = path.join(scratch.dir, label);
  const runDir = path.join(runsDir, 'run-1');
  mkdirSync(runDir, { recursive: true });
  const lines: object[] = [{ type: 'run_start', step: 0 }];
  let t = Date.parse('2026-12-06T00:00:00.000Z');
  const at = (type: string, step: number, extra: object = {}) => lines.push({ v: 1, time: new Date(t).toISOString(), step, type, ...extra });
  for (let step = 1; step <= steps; step++) {
    at('model_request', step);
    t += parts.model;
    at('model_response', step);
    at('tool_call', step, { tool: 'Bash' });
    t += parts.guard;
    at('decision', step, { effect: 'allow' });
    t += parts.command + (step === 1 ? firstExtra : 0);
    at('tool_result', step, { tool: 'Bash', isError: false });
    t += parts.rest;
  }
  at('model_request', steps + 1);
  at('model_response', steps + 1);
  writeFileSync(path.join(runDir, 'trace.jsonl'), `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`);
  return runsDir;
}

describe('stepPartsOf', () => {
  it('gives the mean of each part over the middle of the run', () => {
    const parts = stepPartsOf(runsDirOf('plain', 50, { model: 5, guard: 1, command: 9, rest: 2 }));
    expect(parts).toEqual({ steps: 40, model: 5, guard: 1, command: 9, rest: 2 });
  });

  it('leaves the first step out, however long it took', () => {
    const parts = stepPartsOf(runsDirOf('slow-start', 50, { model: 4, guard: 1, command: 8, rest: 1 }, 300));
    expect(parts.command).toBe(8);
  });

  it('says so when the run has no whole step to time', () => {
    expect(() => stepPartsOf(runsDirOf('none', 1, { model: 4, guard: 1, command: 8, rest: 1 }))).toThrow(/no whole steps/);
  });
});
