import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runTicket } from '../../src/run/run-ticket.js';
import { loadTicket } from '../../src/ticket/load.js';
import { bashTool } from '../../src/tools/bash.js';
import type { RunEvent } from '../../src/trace/events.js';
import { makeRepo, makeTempDir } from '../ticket/temp-repo.js';
import { LAYERS, SRC } from './layers.js';

// The path one Bash call takes through corral, read from the stacks of a real run: the
// files it passes through from the model's reply to its trace events, and no call from a
// lower layer back up into a higher one (a closure handed down and called from below).

/** The src/ files of a stack, innermost first, one entry per frame. */
function srcFrames(stack: string): string[] {
  return stack
    .split('\n')
    .map((line) => /\((\/[^()]+?):\d+:\d+\)$|at (?:async )?(\/[^ ]+?):\d+:\d+$/.exec(line.trim()))
    .flatMap((match) => (match ? [match[1] ?? match[2]!] : []))
    .filter((file) => file.startsWith(`${SRC}/`))
    .map((file) => path.relative(SRC, file));
}

function moduleOf(file: string): string {
  const [first, ...rest] = file.split('/');
  return rest.length === 0 ? first!.replace(/\.ts$/, '') : first!;
}

function layerOf(file: string): number {
  return LAYERS.findIndex((layer) => layer.includes(moduleOf(file)));
}

describe('the path of a Bash call', () => {
  afterEach(() => vi.restoreAllMocks());

  it('passes through at most eight files and never calls back up a layer', async () => {
    const repo = makeRepo({
      'ticket.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nsandbox: none\nmodel: replay:replay.yaml\n',
      'replay.yaml': 'turns:\n  - tools:\n      - Bash: {command: "ls"}\n  - text: done\n',
    });
    const ticket = await loadTicket(path.join(repo, 'ticket.yaml'));
    const stacks: { event: string; frames: string[] }[] = [];
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 200;
    const execute = bashTool.execute.bind(bashTool);
    vi.spyOn(bashTool, 'execute').mockImplementation((input, context) => {
      stacks.push({ event: 'execute', frames: srcFrames(new Error().stack ?? '') });
      return execute(input, context);
    });
    try {
      const onEvent = (event: RunEvent): void => {
        const traced = event.type === 'model_response' || ((event.type === 'decision' || event.type === 'tool_result' || event.type === 'tool_call') && event.tool === 'Bash');
        if (traced) stacks.push({ event: event.type, frames: srcFrames(new Error().stack ?? '') });
      };
      const result = await runTicket(ticket, { keep: false, interrupt: new AbortController().signal, env: { PATH: process.env.PATH ?? '' }, cwd: repo, runsDir: makeTempDir('corral-runs-'), onEvent });
      expect(result.status).toBe('passed');
    } finally {
      Error.stackTraceLimit = limit;
    }

    expect(stacks.map((s) => s.event)).toEqual(['model_response', 'tool_call', 'decision', 'execute', 'tool_result', 'model_response']);
    const upward = stacks.flatMap(({ event, frames }) =>
      frames.slice(0, -1).flatMap((callee, i) => {
        const caller = frames[i + 1]!;
        // LAYERS runs top to bottom: a callee must sit lower, or in the caller's own module.
        const sideways = layerOf(callee) === layerOf(caller) && moduleOf(callee) !== moduleOf(caller);
        return layerOf(callee) < layerOf(caller) || sideways ? [`${event}: ${caller} calls up into ${callee}`] : [];
      }),
    );
    expect(upward).toEqual([]);

    // From the loop that received the reply to the trace: the run's entry and its stage
    // runner sit above the path, not on it.
    const onPath = new Set(stacks.flatMap(({ frames }) => frames).filter((file) => file !== 'run/run-ticket.ts'));
    expect([...onPath].sort()).toEqual(expect.arrayContaining(['agent/loop.ts', 'run/agent-stage.ts', 'run/call-pipeline.ts', 'trace/fan-out.ts']));
    expect(onPath.size).toBeLessThanOrEqual(8);
  });
});
