import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer } from '../support/messages-server.js';
import { preloadProbe } from '../support/probe.js';
import { commitFiles, extraWorktrees, makeDemoRepo } from '../support/repo.js';

const FAKE_KEY = 'sk-ant-test-0123456789abcdefghijklmnop';

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function addTicket(repo: string, name: string, body: string): void {
  commitFiles(repo, { [`fixtures/tickets/${name}`]: body });
}

describe('the real SDK path, against a local Messages API server', () => {
  it('runs a multi-step tool-use conversation to a passed run, streaming, with caching and without leaking the key', async () => {
    server = await startMessagesServer([
      {
        content: [
          { type: 'text', text: 'Reading the module and the environment first.' },
          { type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: 'fixtures/example-project/src/fees.js' } },
          { type: 'tool_use', id: 'toolu_02', name: 'Bash', input: { command: 'env; echo "key=[$ANTHROPIC_API_KEY]"' } },
        ],
        usage: { input_tokens: 1200, output_tokens: 80, cache_creation_input_tokens: 1000, cache_read_input_tokens: 0 },
      },
      {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_03',
            name: 'Edit',
            input: {
              file_path: 'fixtures/example-project/src/fees.js',
              old_string: '  if (late <= 0) return 0;\n  return 0;',
              new_string: '  if (late <= 0) return 0;\n  return Math.floor(late / DAY_MS);',
            },
          },
          { type: 'tool_use', id: 'toolu_04', name: 'Bash', input: { command: "head -c 100000 /dev/zero | tr '\\0' a; echo; echo LAST-LINE" } },
        ],
        usage: { input_tokens: 300, output_tokens: 60, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000 },
      },
      {
        content: [{ type: 'text', text: 'Done.\nQUEUE: fees.js has no test for late loans.' }],
        usage: { input_tokens: 100, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 1500 },
      },
    ]);
    const repo = makeDemoRepo();
    addTicket(
      repo,
      'real-model.yaml',
      'task: Make daysOverdue count days.\nallow: ["fixtures/example-project/src/**"]\nchecks: ["cd fixtures/example-project && node --test"]\nmodel: claude-sonnet-4-6\n',
    );
    const run = await runCli(['run', 'fixtures/tickets/real-model.yaml', '--json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url },
    });
    expect(run.stderr).not.toContain('internal error');
    const report = runReport(run.stdout);
    expect(report).toMatchObject({ status: 'passed', exitCode: 0, steps: 3, model: 'claude-sonnet-4-6' });
    expect(report.usage).toEqual({ inputTokens: 1600, outputTokens: 160, cacheReadTokens: 2500, cacheWriteTokens: 1200 });
    expect(report.costUsd).toBeGreaterThan(0);
    expect(report.followUps).toEqual(['fees.js has no test for late loans.']);
    expect(run.exitCode).toBe(0);

    expect(server.requests).toHaveLength(3);
    const bodies = server.requests.map((r) => r.body as unknown as Record<string, any>);
    const second = bodies[1]!;
    for (const body of bodies) {
      expect(body.stream).toBe(true);
      expect(body.model).toBe('claude-sonnet-4-6');
      expect(body.tools.map((t: { name: string }) => t.name)).toEqual(['Bash', 'Read', 'Write', 'Edit', 'Glob', 'Grep']);
      expect(body.system[0].cache_control).toEqual({ type: 'ephemeral' });
      expect(body.tools.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    }
    // The system prompt names the fence, the checks, the way of working and the QUEUE: convention.
    const system = bodies[0]!.system[0].text as string;
    expect(system).toContain('fixtures/example-project/src/**');
    expect(system).toContain('cd fixtures/example-project && node --test');
    expect(system).toMatch(/Read the relevant code before you write/);
    expect(system).toMatch(/smallest change .* with a test/);
    expect(system).toContain('"QUEUE:"');
    expect(bodies[0]!.messages[0].content[0].text ?? bodies[0]!.messages[0].content).toContain('Make daysOverdue count days.');
    // The second request carries both tool results, in order, after the assistant turn.
    const results = second.messages.at(-1).content;
    expect(results.map((r: { tool_use_id: string }) => r.tool_use_id)).toEqual(['toolu_01', 'toolu_02']);
    expect(results[0].content).toContain('export function daysOverdue');
    expect(results.at(-1).cache_control).toEqual({ type: 'ephemeral' });
    // No API key reaches a tool's environment, a request body, the trace or the report.
    expect(results[1].content).toContain('key=[]');
    expect(JSON.stringify(server.requests.map((r) => r.body))).not.toContain(FAKE_KEY);
    expect(readFileSync(report.trace, 'utf8')).not.toContain(FAKE_KEY);
    expect(run.stdout).not.toContain(FAKE_KEY);
    const auth = JSON.stringify(server.requests[0]!.headers);
    expect(auth).toContain(FAKE_KEY);
    // Output past the cap is cut in the middle, visibly, with head and tail kept.
    const loud = bodies[2]!.messages.at(-1).content[1].content as string;
    expect(loud).toMatch(/\[\.\.\. \d+ bytes cut \.\.\.\]/);
    expect(loud).toContain('LAST-LINE');
    expect(loud.length).toBeLessThan(31_000);
    expect(extraWorktrees(repo)).toEqual([]);
  });

  it("calls the model without loading Node's fetch implementation, which costs a start tens of ms", async () => {
    server = await startMessagesServer([
      { content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'echo hi' } }] },
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      { content: [{ type: 'text', text: 'Done.' }] },
    ]);
    const repo = makeDemoRepo();
    addTicket(repo, 'plain.yaml', 'task: t\nallow: ["**"]\nallow_empty: true\nmodel: claude-sonnet-4-6\n');
    // Node lists every internal module it has loaded; corral's process writes its list as it exits.
    const probe = preloadProbe('corral-modules-', (dir) => [
      `if (/corral\\.cjs$/.test(process.argv[1] ?? '')) process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'modules.json'))}, JSON.stringify(process.moduleLoadList)));`,
    ]);
    const run = await runCli(['run', 'fixtures/tickets/plain.yaml', '--json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url, NODE_OPTIONS: probe.nodeOptions },
    });
    expect(runReport(run.stdout)).toMatchObject({ status: 'passed', steps: 2 });
    // Three requests: the SDK read the 529's error body and retried through the same classes.
    expect(server.requests).toHaveLength(3);
    const modules = JSON.parse(readFileSync(path.join(probe.dir, 'modules.json'), 'utf8')) as string[];
    expect(modules).toContain('NativeModule _http_client');
    expect(modules.filter((name) => /undici|internal\/fetch/.test(name))).toEqual([]);
  });

  it("goes through Node's fetch when a proxy variable is set, with the SDK's headers intact", async () => {
    server = await startMessagesServer([
      { content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'true' } }] },
      { content: [{ type: 'text', text: 'Done.' }] },
    ]);
    const repo = makeDemoRepo();
    addTicket(repo, 'proxied.yaml', 'task: t\nallow: ["**"]\nallow_empty: true\nmodel: claude-sonnet-4-6\n');
    // Without NODE_USE_ENV_PROXY, Node's fetch itself ignores the variable and goes straight to the server.
    const run = await runCli(['run', 'fixtures/tickets/proxied.yaml', '--json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url, HTTP_PROXY: 'http://127.0.0.1:9', NODE_USE_ENV_PROXY: undefined },
    });
    expect(runReport(run.stdout)).toMatchObject({ status: 'passed', steps: 2 });
    expect(server.requests).toHaveLength(2);
    for (const { headers } of server.requests) {
      // The key, however this SDK sends it (x-api-key or a bearer token), and the SDK's own headers.
      expect([headers['x-api-key'], headers.authorization]).toContainEqual(expect.stringContaining(FAKE_KEY));
      expect(headers).toMatchObject({ 'anthropic-version': expect.any(String), 'content-type': 'application/json', 'x-stainless-lang': 'js' });
      expect(headers['user-agent']).toMatch(/^Anthropic\/JS /);
    }
    expect((server.requests[1]!.body as unknown as { messages: unknown[] }).messages).toHaveLength(3);
  });

  it('ends as model_error (exit 6) when the API keeps failing after the SDK retries, keeping the trace', async () => {
    server = await startMessagesServer([
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ]);
    const repo = makeDemoRepo();
    addTicket(repo, 'overloaded.yaml', 'task: t\nallow: ["**"]\nmodel: claude-sonnet-4-6\n');
    const run = await runCli(['run', 'fixtures/tickets/overloaded.yaml', '--json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url },
    });
    expect(run.exitCode).toBe(6);
    const report = runReport(run.stdout);
    expect(report.status).toBe('model_error');
    expect(report.reason).toContain('529');
    expect(readFileSync(report.patch, 'utf8')).toBe('');
    expect(server.requests.length).toBe(3);
    expect(extraWorktrees(repo)).toEqual([]);
  });

  it('makes no worktree for a run whose first request never went out: the API unreachable is model_error (exit 6)', async () => {
    // A port nothing listens on: the connection is refused, so no request is ever sent.
    const closed = await startMessagesServer([]);
    const url = closed.url;
    await closed.close();
    const repo = makeDemoRepo();
    commitFiles(repo, { 'corral.yaml': 'model_api: {timeout_seconds: 10, max_retries: 0}\n' });
    addTicket(repo, 'unreachable.yaml', 'task: t\nallow: ["**"]\nmodel: claude-sonnet-4-6\n');
    const run = await runCli(['run', 'fixtures/tickets/unreachable.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: url } });
    expect(run.exitCode).toBe(6);
    const report = runReport(run.stdout);
    expect(report.status).toBe('model_error');
    const events = readFileSync(report.trace, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { type: string }).type);
    expect(events).toContain('model_request');
    expect(events).not.toContain('worktree');
    expect(extraWorktrees(repo)).toEqual([]);
  });

  it('ends as refused (exit 5) when the model refuses', async () => {
    server = await startMessagesServer([{ content: [{ type: 'text', text: 'I cannot help with that.' }], stop_reason: 'refusal' }]);
    const repo = makeDemoRepo();
    addTicket(repo, 'refusal.yaml', 'task: t\nallow: ["**"]\nmodel: claude-sonnet-4-6\n');
    const run = await runCli(['run', 'fixtures/tickets/refusal.yaml', '--json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url },
    });
    expect(run.exitCode).toBe(5);
    expect(runReport(run.stdout).status).toBe('refused');
  });

  it('a ticket that needs a real model and has no key exits 64 with the fix, before any worktree', async () => {
    const repo = makeDemoRepo();
    addTicket(repo, 'needs-key.yaml', 'task: t\nallow: ["**"]\nmodel: claude-sonnet-4-6\n');
    const run = await runCli(['run', 'fixtures/tickets/needs-key.yaml'], { cwd: repo, env: { ANTHROPIC_API_KEY: undefined } });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('ANTHROPIC_API_KEY is not set');
    expect(run.stderr).toContain('export ANTHROPIC_API_KEY=');
    expect(run.stdout).toBe('');
    expect(extraWorktrees(repo)).toEqual([]);
  });
});
