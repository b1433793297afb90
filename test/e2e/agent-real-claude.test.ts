import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer, type ScriptStep } from '../support/messages-server.js';
import { repoWithFiles } from '../support/repo.js';

// The real Claude Code CLI under corral, against the local Messages API stand-in. It runs
// only where CORRAL_TEST_CLAUDE_CODE names the CLI (installed apart from this project, e.g.
// `npm install --prefix /tmp/claude @anthropic-ai/claude-code@2.1.328`, then
// CORRAL_TEST_CLAUDE_CODE=/tmp/claude/node_modules/.bin/claude).

const CLAUDE = process.env.CORRAL_TEST_CLAUDE_CODE;

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// Skipped, with this reason in its name, unless CORRAL_TEST_CLAUDE_CODE names the CLI.
describe.skipIf(CLAUDE === undefined)(`the real Claude Code CLI under corral${CLAUDE === undefined ? ' (skipped: set CORRAL_TEST_CLAUDE_CODE=/path/to/claude to run it)' : ` (${CLAUDE})`}`, () => {
  it("runs a ticket: its calls judged by corral's guard (a denied one with corral's rule as reason), then the fence and checks", async () => {
    // With nonessential traffic off, Claude Code 2.1 asks the API for the agent's turns only.
    const turns: ScriptStep[] = [
      { content: [{ type: 'tool_use', id: 'toolu_deny', name: 'Bash', input: { command: 'git status --short', description: 'status' } }] },
      { content: [{ type: 'tool_use', id: 'toolu_write', name: 'Bash', input: { command: "printf 'export const hello = 1;\\n' > src/hello.js", description: 'write' } }] },
      // The tools run in a sandbox with no network and no key: the model's API is reached only through corral's proxy.
      { content: [{ type: 'tool_use', id: 'toolu_env', name: 'Bash', input: { command: 'env', description: 'env' } }] },
      { content: [{ type: 'tool_use', id: 'toolu_net', name: 'Bash', input: { command: `node -e "require('http').get(process.argv[1], () => console.log('REACHED')).on('error', (e) => console.log('NO NETWORK ' + e.code))" URL`, description: 'net' } }] },
      { content: [{ type: 'text', text: 'Added src/hello.js.' }] },
    ];
    const repo = repoWithFiles({
      'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(CLAUDE)}\n`,
      'ticket.yaml': `${JSON.stringify({ task: 'Add src/hello.js.', allow: ['src/**'], agent: 'claude-code', model: 'claude-sonnet-4-5', checks: ['grep -q hello src/hello.js'], policy: { deny: ['Bash(git status:*)'], allow: ['Bash(printf:*)', 'Bash(env)', 'Bash(node:*)'] } })}\n`,
      'src/greet.js': 'export const greet = () => "hi";\n',
    });
    server = await startMessagesServer(turns);
    const net = (turns[3] as { content: { input: { command: string } }[] }).content[0]!;
    net.input.command = net.input.command.replace(/URL$/, server.url);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key-000000', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' }, timeoutMs: 240_000 });
    const summary = server.requests.map((r) => `${r.body.model} tools=${(r.body.tools ?? []).length} msgs=${r.body.messages.length}`).join('\n');
    const report = runReport(run.stdout);
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    if (run.exitCode !== 0) console.log({ exit: run.exitCode, reason: report.reason, stderr: run.stderr.slice(-3000), requests: summary });
    expect(run.exitCode).toBe(0);
    const denied = events.find((e) => e.type === 'decision' && e.effect === 'deny');
    expect(denied).toMatchObject({ tool: 'Bash', rule: 'Bash(git status:*)' });
    expect(report.status).toBe('passed');
    // Inside Claude Code the denial came back to the model as the tool's result, with corral's rule.
    const sent = JSON.stringify(server.requests.map((r) => r.body.messages));
    expect(sent).toContain('Rule: Bash(git status:*)');
    // The allowed call ran in the worktree, and the trace holds the turns, calls and results.
    expect(events.filter((e) => e.type === 'decision').map((e) => e.effect)).toEqual(['deny', 'allow', 'allow', 'allow']);
    expect(events.filter((e) => e.type === 'tool_result').length).toBe(4);
    // The key reached the API (added by the proxy outside the sandbox), never the agent or its tools.
    expect(server.requests.every((r) => r.headers['x-api-key'] === 'sk-ant-test-not-a-real-key-000000')).toBe(true);
    expect(sent).not.toContain('sk-ant-test-not-a-real-key');
    expect(sent).toContain('NO NETWORK');
    expect(sent).not.toContain('"content":"REACHED');
    expect(events.filter((e) => e.type === 'model_response').length).toBeGreaterThanOrEqual(3);
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['src/hello.js']);
    // Its prompt is corral's: the fence and checks in the system prompt, the ticket as the task.
    expect(JSON.stringify(server.requests[0]!.body.system)).toContain('You may change only paths matching: src/**');
    expect(JSON.stringify(server.requests[0]!.body.messages)).toContain('Add src/hello.js.');
  });

  it('sends failing checks back by resuming its session, which then fixes them', async () => {
    const turns: ScriptStep[] = [
      { content: [{ type: 'tool_use', id: 'toolu_w1', name: 'Bash', input: { command: "printf 'helo\\n' > src/hello.txt", description: 'write' } }] },
      { content: [{ type: 'text', text: 'Done.' }] },
      { content: [{ type: 'tool_use', id: 'toolu_w2', name: 'Bash', input: { command: "printf 'hello\\n' > src/hello.txt", description: 'fix' } }] },
      { content: [{ type: 'text', text: 'Fixed the typo.' }] },
    ];
    const repo = repoWithFiles({
      'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(CLAUDE)}\n`,
      'ticket.yaml': `${JSON.stringify({ task: 'Write hello to src/hello.txt.', allow: ['src/**'], agent: 'claude-code', model: 'claude-sonnet-4-5', checks: ['grep -qx hello src/hello.txt'], policy: { allow: ['Bash(printf:*)'] } })}\n`,
      'src/greet.js': 'export const greet = () => "hi";\n',
    });
    server = await startMessagesServer(turns);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key-000000', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' }, timeoutMs: 240_000 });
    const report = runReport(run.stdout);
    if (run.exitCode !== 0) console.log({ reason: report.reason, stderr: run.stderr.slice(-2000), requests: server.requests.map((r) => r.body.messages.length) });
    expect(run.exitCode).toBe(0);
    // The resumed session carries the first one's conversation, and the checks' failure after it.
    const resumed = server.requests[2]!;
    expect(resumed.body.messages.length).toBeGreaterThan(3);
    expect(JSON.stringify(resumed.body.messages)).toContain('grep -qx hello src/hello.txt');
  });

  it('an API error ends the run as model_error, exit 6, never 0', async () => {
    const repo = repoWithFiles({
      'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(CLAUDE)}\n`,
      'ticket.yaml': `${JSON.stringify({ task: 'Anything.', allow: ['src/**'], agent: 'claude-code', model: 'claude-sonnet-4-5', network: true })}\n`,
      'src/greet.js': 'export const greet = () => "hi";\n',
    });
    // A request the API rejects is not retried.
    server = await startMessagesServer(Array.from({ length: 12 }, () => ({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message: 'messages: the stand-in rejects this request' } } })));
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key-000000', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' }, timeoutMs: 240_000 });
    const report = runReport(run.stdout);
    expect({ exit: run.exitCode, status: report.status }).toEqual({ exit: 6, status: 'model_error' });
    expect(report.reason).toContain('the stand-in rejects this request');
  });

  it('a step budget breached ends its process group, exit 3', async () => {
    const call = (n: number): ScriptStep => ({ content: [{ type: 'tool_use', id: `toolu_${n}`, name: 'Bash', input: { command: `echo ${n}`, description: 'echo' } }] });
    const repo = repoWithFiles({
      'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(CLAUDE)}\n`,
      'ticket.yaml': `${JSON.stringify({ task: 'Echo.', allow: ['src/**'], agent: 'claude-code', model: 'claude-sonnet-4-5', budget: { steps: 2 }, policy: { allow: ['Bash(echo:*)'] } })}\n`,
      'src/greet.js': 'export const greet = () => "hi";\n',
    });
    server = await startMessagesServer([call(1), call(2), call(3), call(4), { content: [{ type: 'text', text: 'Done.' }] }]);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key-000000', ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' }, timeoutMs: 240_000 });
    const report = runReport(run.stdout);
    expect({ exit: run.exitCode, budget: report.budgetExhausted }).toEqual({ exit: 3, budget: 'steps' });
    expect(server.requests.length).toBeLessThanOrEqual(3);
  });
});
