import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer } from '../support/messages-server.js';
import { repoWithFiles } from '../support/repo.js';

const FAKE_KEY = 'sk-ant-test-0123456789abcdefghijklmnop';

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Records a run against the local Messages API server: a Write, an Edit, a Bash `ls`, then the end. */
async function recordRun(): Promise<{ repo: string; report: Record<string, any> }> {
  server = await startMessagesServer([
    { content: [{ type: 'text', text: 'Adding b.' }, { type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: 'src/b.txt', content: 'bee\n' } }], usage: { input_tokens: 900, output_tokens: 40, cache_creation_input_tokens: 800 } },
    { content: [{ type: 'tool_use', id: 'toolu_e', name: 'Edit', input: { file_path: 'src/a.txt', old_string: 'one', new_string: 'two' } }], usage: { input_tokens: 120, output_tokens: 30, cache_read_input_tokens: 800 } },
    { content: [{ type: 'tool_use', id: 'toolu_l', name: 'Bash', input: { command: 'ls src' } }], usage: { input_tokens: 80, output_tokens: 10, cache_read_input_tokens: 900 } },
    { content: [{ type: 'text', text: 'Done.' }], usage: { input_tokens: 60, output_tokens: 5, cache_read_input_tokens: 950 } },
  ]);
  const repo = repoWithFiles({ 'src/a.txt': 'one\n', 'ticket.yaml': 'task: Add b and fix a.\nallow: ["src/**"]\nmodel: claude-sonnet-4-6\n' });
  const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url } });
  expect(run.stderr).not.toContain('internal error');
  expect(run.exitCode).toBe(0);
  await server.close();
  server = undefined;
  return { repo, report: runReport(run.stdout) };
}

describe('a recorded session', () => {
  it('replays offline to the same changes, status, steps and tokens', async () => {
    const { repo, report } = await recordRun();
    expect(report).toMatchObject({ status: 'passed', steps: 4 });
    const trace = path.relative(repo, report.trace);
    const replay = await runCli(['run', 'ticket.yaml', '--json', '--model', `replay:${trace}`], { cwd: repo, env: { ANTHROPIC_API_KEY: undefined, ANTHROPIC_BASE_URL: undefined } });
    expect(replay.stderr).not.toContain('internal error');
    expect(replay.exitCode).toBe(0);
    const again = runReport(replay.stdout);
    expect(again).toMatchObject({ status: report.status, steps: report.steps, usage: report.usage });
    expect(again.runDir).not.toBe(report.runDir);
    const patch = readFileSync(report.patch, 'utf8');
    expect(patch).toContain('+bee');
    expect(patch).toContain('+two');
    expect(readFileSync(again.patch, 'utf8')).toBe(patch);
  });

  it('a broken trace named as the model exits 64 naming the file and line', async () => {
    const line = (seq: number, event: Record<string, unknown>): string => JSON.stringify({ v: 1, seq, time: '2025-01-01T00:00:00.000Z', run: 'r', ticket: 't', step: 0, ...event });
    const repo = repoWithFiles({ 'ticket.yaml': 'task: t\nallow: ["**"]\nmodel: replay:bad.jsonl\n', 'bad.jsonl': `${line(0, { type: 'model_request', step: 1, messages: 1, bytes: 2 })}\nnot json\n${line(2, { type: 'end', status: 'failed', exitCode: 1, reason: 'x' })}\n` });
    const run = await runCli(['run', 'ticket.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('bad.jsonl:2:1');
    expect(run.stderr).toContain('not a JSON line');
  });
});

describe('corral replay', () => {
  it('reports exactly the calls a rule change affects, with the rule on each side', async () => {
    const { repo, report } = await recordRun();
    const trace = path.relative(repo, report.trace);

    const same = await runCli(['replay', trace], { cwd: repo });
    expect(same.stderr).toBe('');
    expect(same.stdout).toBe('1 trace, 3 calls, 0 changed');
    expect(same.exitCode).toBe(0);

    const replayed = await runCli(['run', 'ticket.yaml', '--json', '--model', `replay:${trace}`], { cwd: repo });
    expect(replayed.exitCode).toBe(0);

    writeFileSync(path.join(repo, 'corral.yaml'), 'policy: {deny: ["Bash(ls:*)"]}\n');
    const changed = await runCli(['replay', trace], { cwd: repo });
    expect(changed.exitCode).toBe(1);
    const lines = changed.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${trace}  (ticket ticket.yaml)`);
    expect(lines[1]).toMatch(/^ {2}step 3 {2}Bash\(ls src\) {2}allow by \S+ → deny by Bash\(ls:\*\) \(project\)$/);
    expect(lines.slice(2)).toEqual(['1 trace, 3 calls, 1 changed']);

    const json = await runCli(['replay', trace, '--json'], { cwd: repo });
    expect(json.exitCode).toBe(1);
    const data = JSON.parse(json.stdout);
    expect(data.totals).toEqual({ traces: 1, calls: 3, changed: 1, otherRule: 0 });
    expect(data.traces[0].changed).toMatchObject([{ step: 3, id: 'toolu_l', tool: 'Bash', input: { command: 'ls src' }, then: { effect: 'allow' }, now: { effect: 'deny', rule: 'Bash(ls:*)', scope: 'project' } }]);

    // The folder of runs: the first and a second one (its offline replay, made before the rule).
    const folder = await runCli(['replay', '.corral/runs'], { cwd: repo });
    expect(folder.exitCode).toBe(1);
    expect(folder.stdout.trim().split('\n').at(-1)).toBe('2 traces, 6 calls, 2 changed');

    rmSync(path.join(repo, 'corral.yaml'));
    const back = await runCli(['replay', '.corral/runs'], { cwd: repo });
    expect(back.exitCode).toBe(0);
    expect(back.stdout).toBe('2 traces, 6 calls, 0 changed');

    // Without its ticket the trace is judged with its repository's config, and says so.
    renameSync(path.join(repo, 'ticket.yaml'), path.join(repo, 'moved.yaml'));
    const gone = await runCli(['replay', trace], { cwd: repo });
    expect(gone.stdout).toContain('note: ticket ticket.yaml no longer exists: judged with the config of . and no ticket fence or rules');
    expect(gone.stdout.trim().split('\n').at(-1)).toMatch(/^1 trace, 3 calls, 0 changed/);
  });

  it('exits 64 on input that is not a trace', async () => {
    const repo = repoWithFiles({ 'notes.txt': 'hello\n', 'empty/keep': '' });
    for (const args of [['replay', 'missing.jsonl'], ['replay', 'notes.txt'], ['replay', 'empty']]) {
      const run = await runCli(args, { cwd: repo });
      expect(run.exitCode).toBe(64);
      expect(run.stderr).toMatch(/^corral: /);
    }
  });
});
