import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { conversationProblem } from '../../src/agent/context-edit.js';
import type { MessageParam } from '../../src/agent/model.js';
import { runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer, type ScriptStep } from '../support/messages-server.js';
import { repoWithFiles } from '../support/repo.js';

// A long run with large outputs and a small context window, through the real CLI: the
// conversation is cleared and compacted, the trace says so, and the run still does its
// work. With the replay model, and with the real SDK against the local Messages API.

const FAKE_KEY = 'sk-ant-test-0123456789abcdefghijklmnop';
const WINDOW = 32_768;
const STEPS = 30;
/** 20,000 bytes of output: a few such results fill this window. */
const LOUD = (i: number) => `head -c 20000 /dev/zero | tr '\\0' a; echo ' end of step ${i}'`;

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const TICKET = (model: string) => `task: Print a lot, then change the app.\nallow: ["src/**"]\nmodel: ${model}\nsandbox: none\ncontext: {window: ${WINDOW}, keep_tool_results: 1}\n`;

function traceEvents(file: string): Record<string, any>[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, any>);
}

describe('a long run with a small context window', () => {
  it('replay model: clears and compacts, plays every scripted turn once, shows it in `corral trace`, and replays and re-judges its own trace', async () => {
    const script = ['turns:'];
    for (let i = 0; i < STEPS; i++) script.push('  - tools:', `      - Bash: {command: ${JSON.stringify(LOUD(i))}}`);
    script.push('  - tools:', '      - Write: {file_path: src/app.js, content: "export const app = 2;\\n"}', '  - text: Changed the app after all that output.', '');
    const repo = repoWithFiles({ 'src/app.js': 'export const app = 1;\n', 'ticket.yaml': TICKET('replay:script.yaml'), 'script.yaml': script.join('\n') });

    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    expect(run.stderr).not.toContain('internal error');
    const report = runReport(run.stdout);
    expect(report).toMatchObject({ status: 'passed', exitCode: 0, steps: STEPS + 2, finalText: 'Changed the app after all that output.' });
    expect(readFileSync(report.patch, 'utf8')).toContain('+export const app = 2;');

    const events = traceEvents(report.trace);
    const cleared = events.filter((e) => e.type === 'context_cleared');
    const compacted = events.filter((e) => e.type === 'context_compacted');
    expect(cleared.length).toBeGreaterThan(0);
    expect(compacted.length).toBeGreaterThan(0);
    for (const e of [...cleared, ...compacted]) expect(e.bytesAfter).toBeLessThan(e.bytesBefore);
    expect(compacted[0]!.summary).toContain('Print a lot, then change the app.');
    expect(compacted.at(-1)!.summary).toMatch(/step \d+: Bash\(head -c 20000 .*\) — allowed \(.+\) — ok/);
    // Each scripted command ran once, in order: a compaction consumes no scripted reply.
    const commands = events.filter((e) => e.type === 'tool_call' && e.tool === 'Bash').map((e) => e.input.command);
    expect(commands).toEqual(Array.from({ length: STEPS }, (_, i) => LOUD(i)));
    // What is sent stays bounded: never more than the window's share of it in bytes.
    const sent = events.filter((e) => e.type === 'model_request').map((e) => e.bytes as number);
    expect(Math.max(...sent)).toBeLessThan(WINDOW * 4 * 0.6);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);

    const trace = path.relative(repo, report.trace);
    const shown = await runCli(['trace', trace], { cwd: repo });
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`context +cleared ${cleared.length}× \\(\\d+ tool results?\\) · compacted ${compacted.length}× \\(\\d+ turns? into a summary\\)`));

    const judged = await runCli(['replay', trace], { cwd: repo });
    expect(judged.stderr).toBe('');
    expect(judged.stdout).toBe(`1 trace, ${STEPS + 1} calls, 0 changed`);
    expect(judged.exitCode).toBe(0);

    // The recorded responses play back to the same run, edits and all.
    const again = await runCli(['run', 'ticket.yaml', '--json', '--model', `replay:${trace}`], { cwd: repo });
    expect(again.exitCode).toBe(0);
    const replayed = runReport(again.stdout);
    expect(replayed).toMatchObject({ status: 'passed', steps: STEPS + 2 });
    const replayedEvents = traceEvents(replayed.trace);
    expect(replayedEvents.filter((e) => e.type === 'context_compacted').map((e) => e.turns)).toEqual(compacted.map((e) => e.turns));
  });

  it('real SDK: the request bodies the API receives stay bounded and valid after compaction', async () => {
    const replies: ScriptStep[] = [];
    for (let i = 0; i < STEPS; i++) replies.push({ content: [{ type: 'tool_use', id: `toolu_loud_${i}`, name: 'Bash', input: { command: LOUD(i) } }] });
    replies.push({ content: [{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'src/app.js', content: 'export const app = 3;\n' } }] });
    replies.push({ content: [{ type: 'text', text: 'Done.' }] });
    server = await startMessagesServer(replies);
    const repo = repoWithFiles({ 'src/app.js': 'export const app = 1;\n', 'ticket.yaml': TICKET('claude-sonnet-4-6') });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url } });
    expect(run.stderr).not.toContain('internal error');
    const report = runReport(run.stdout);
    expect(report).toMatchObject({ status: 'passed', exitCode: 0, steps: STEPS + 2 });

    expect(server.requests).toHaveLength(STEPS + 2);
    const bodies = server.requests.map((r) => r.body as unknown as { messages: MessageParam[] });
    const sizes = bodies.map((body) => JSON.stringify(body).length);
    // Without edits the last request would carry all 30 outputs: over 600 KB.
    const bound = WINDOW * 4 * 0.6;
    for (const [i, body] of bodies.entries()) {
      expect(conversationProblem(body.messages), `request ${i + 1}`).toBeNull();
      expect(sizes[i], `request ${i + 1}`).toBeLessThan(bound);
    }
    const events = traceEvents(report.trace);
    const compactedAt = events.filter((e) => e.type === 'context_compacted').map((e) => e.step as number);
    expect(compactedAt.length).toBeGreaterThan(0);
    // After a compaction the request starts with the summary, which keeps the task.
    const after = bodies[compactedAt[0]! - 1]!.messages[0]!;
    const first = typeof after.content === 'string' ? after.content : (after.content[0] as { text: string }).text;
    expect(first).toMatch(/^\[corral compacted this conversation/);
    expect(first).toContain('Print a lot, then change the app.');
    // Every call the model made was answered, cleared or not, by its id.
    const lastResults = bodies.at(-1)!.messages.at(-1)!.content as { type: string; tool_use_id: string }[];
    expect(lastResults.map((r) => r.tool_use_id)).toEqual(['toolu_write']);
    expect(JSON.stringify(bodies)).not.toContain(FAKE_KEY);
  });
});
