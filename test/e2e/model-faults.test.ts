// The fault suite for the model: each fault the Messages API (or the wire to it) can
// produce, made by the local server and driven through the real CLI. Every case checks
// the documented outcome (exit code and --json status), that the agent's edits made
// before the fault are in the patch, that no worktree and no process of the run is left,
// and that the API key shows up nowhere a person or a log would read it.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer, type ScriptReply, type ScriptStep } from '../support/messages-server.js';
import { extraWorktrees, repoWithFiles } from '../support/repo.js';

const FAKE_KEY = 'sk-ant-test-model-faults-0123456789abcdef';
const TICKET = 'task: t\nallow: ["src/**"]\nmodel: claude-sonnet-4-6\n';
/** Few retries and a short timeout keep each case quick; a case that needs others writes its own. */
const QUICK_API = 'model_api: {timeout_seconds: 10, max_retries: 1}\n';

/** The first reply of every case: an edit that must survive whatever comes after it. */
const WRITE_A: ScriptReply = {
  content: [
    { type: 'text', text: 'Writing a first.' },
    { type: 'tool_use', name: 'Write', input: { file_path: 'src/a.txt', content: 'written before the fault\n' } },
  ],
};
const DONE: ScriptReply = { content: [{ type: 'text', text: 'Done.' }] };
/** A reply the fault cuts into: text, then a tool call that must never run. */
const WRITE_B: ScriptReply = {
  content: [
    { type: 'text', text: 'Now b, which must not be written.' },
    { type: 'tool_use', name: 'Write', input: { file_path: 'src/b.txt', content: 'after the fault\n' } },
  ],
};

interface Report {
  status: string;
  exitCode: number;
  reason: string;
  patch?: string;
  trace: string;
  worktree?: string;
}

interface FaultRun {
  run: CliRun;
  report: Report;
  server: MessagesServer;
  repo: string;
  /** The worktree the run made, from its trace. */
  worktree: string;
}

// Closed after the file rather than per test: the cases run concurrently.
const servers: MessagesServer[] = [];
afterAll(() => Promise.all(servers.map((server) => server.close())));

async function runWithFaults(script: ScriptStep[], config = QUICK_API): Promise<FaultRun> {
  const server = await startMessagesServer(script);
  servers.push(server);
  const repo = repoWithFiles({ 'corral.yaml': config, 'ticket.yaml': TICKET, 'src/keep.txt': 'kept\n' }, 'corral-model-faults-');
  const run = await runCli(['run', 'ticket.yaml', '--json'], {
    cwd: repo,
    env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url },
  });
  expect(run.stderr.split('\n').filter((line) => /internal error/i.test(line)), run.stderr).toEqual([]);
  const report = runReport(run.stdout) as Report;
  expect(report.exitCode).toBe(run.exitCode);
  const events = readFileSync(report.trace, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; dir?: string });
  const worktree = events.find((e) => e.type === 'worktree')?.dir;
  expect(worktree, 'the trace names the worktree').toBeTypeOf('string');
  return { run, report, server, repo, worktree: worktree! };
}

/** What every case leaves, whatever its outcome: the work kept, nothing else left behind, no key shown. */
function expectNothingLost(result: FaultRun): void {
  const { run, report, repo, worktree } = result;
  expect(report.patch, 'a patch is written').toBeTypeOf('string');
  const patch = readFileSync(report.patch!, 'utf8');
  expect(patch).toContain('src/a.txt');
  expect(patch).toContain('+written before the fault');
  expect(patch).not.toContain('src/b.txt');
  expect(existsSync(report.trace)).toBe(true);
  expect(report.worktree).toBeNull();
  expect(extraWorktrees(repo)).toEqual([]);
  expect(existsSync(worktree)).toBe(false);
  const left = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(worktree));
  expect(left, 'processes of the run still alive').toEqual([]);
  for (const text of [run.stdout, run.stderr, patch, readFileSync(report.trace, 'utf8')]) expect(text).not.toContain(FAKE_KEY);
}

function expectOutcome(result: FaultRun, status: string, exitCode: number): void {
  expect({ status: result.report.status, exitCode: result.run.exitCode, reason: result.report.reason }).toMatchObject({ status, exitCode });
  expectNothingLost(result);
}

/** The last user message of the `n`th request (0-based), as the client sent it. */
function lastUserContent(server: MessagesServer, n: number): unknown {
  const messages = server.requests[n]!.body.messages;
  const last = messages.at(-1)!;
  expect(last.role).toBe('user');
  return last.content;
}

function toolResults(server: MessagesServer, n: number): { tool_use_id: string; is_error?: boolean; content: string }[] {
  return lastUserContent(server, n) as { tool_use_id: string; is_error?: boolean; content: string }[];
}

// Each case has its own server and repository, so they run concurrently.
describe.concurrent('model faults through the real CLI: nothing lost, nothing left, an honest exit code', () => {
  describe('HTTP errors: the SDK retries, then model_error (exit 6)', () => {
    it('429 with retry-after: the SDK waits as told, retries, and the run passes', async () => {
      const result = await runWithFaults([WRITE_A, { status: 429, headers: { 'retry-after': '1', 'retry-after-ms': null } }, DONE]);
      expectOutcome(result, 'passed', 0);
      const [, limited, retried] = result.server.requests;
      expect(retried!.receivedAt - limited!.receivedAt).toBeGreaterThanOrEqual(950);
    });

    it('500 every time: model_error after the configured retries', async () => {
      const result = await runWithFaults([WRITE_A, { status: 500 }, { status: 500 }]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/500 api_error.*after 1 retry/);
      expect(result.server.requests).toHaveLength(3);
    });

    it('529 overloaded every time: model_error after the configured retries', async () => {
      const result = await runWithFaults([WRITE_A, { status: 529 }, { status: 529 }]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/529 overloaded_error.*overloaded/);
      expect(result.server.requests).toHaveLength(3);
    });

    it('a 502 whose body is HTML, not JSON, every time: model_error, not a crash', async () => {
      const html = { wire: 'raw', status: 502, contentType: 'text/html', body: '<html><body>Bad gateway</body></html>' } as const;
      const result = await runWithFaults([WRITE_A, html, html]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toContain('502');
    });

    it('overloaded as an error event inside a started stream: model_error', async () => {
      const result = await runWithFaults([WRITE_A, { wire: 'stream', reply: WRITE_B, then: 'error' }, DONE]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/overloaded_error/);
    });
  });

  describe('the connection breaks', () => {
    it('reset before the response, once: the SDK retries and the run passes', async () => {
      const result = await runWithFaults([WRITE_A, { wire: 'reset' }, DONE]);
      expectOutcome(result, 'passed', 0);
      expect(result.server.requests).toHaveLength(3);
    });

    it('reset before the response, every time: model_error after the retries', async () => {
      const result = await runWithFaults([WRITE_A, { wire: 'reset' }, { wire: 'reset' }]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/could not reach the Anthropic API.*after 1 retry/);
    });

    it('reset in the middle of a stream: model_error, and the half-sent tool call never runs', async () => {
      const reset = { wire: 'stream', reply: WRITE_B, afterEvents: 6, then: 'reset' } as const;
      const result = await runWithFaults([WRITE_A, reset, reset]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/broke off/);
    });

    it('reset in the middle of a stream, once: still model_error, as the SDK retries only until a response starts', async () => {
      const result = await runWithFaults([WRITE_A, { wire: 'stream', reply: WRITE_B, then: 'reset' }, DONE]);
      expectOutcome(result, 'model_error', 6);
      expect(result.server.requests).toHaveLength(2);
    });

    it('a reply slower than the timeout: model_error saying it timed out', async () => {
      // Not 1 s: the servers share this worker with the other cases' synchronous git calls,
      // and the first, prompt reply has to arrive within the timeout too.
      const started = Date.now();
      const result = await runWithFaults([WRITE_A, { ...DONE, delayMs: 60_000 }], 'model_api: {timeout_seconds: 3, max_retries: 0}\n');
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/timed out/);
      expect(Date.now() - started).toBeLessThan(45_000);
    });

    it('a stream that goes quiet after it started: the same timeout ends it, not the minute budget', async () => {
      const started = Date.now();
      const stall = { wire: 'stream', reply: WRITE_B, afterEvents: 5, then: 'stall' } as const;
      const result = await runWithFaults([WRITE_A, stall], 'model_api: {timeout_seconds: 3, max_retries: 0}\n');
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/timed out: its stream sent nothing for 3 s/);
      expect(Date.now() - started).toBeLessThan(45_000);
    });
  });

  describe('malformed responses: model_error, never a crash and never a pass', () => {
    it('a body that is not JSON', async () => {
      const result = await runWithFaults([WRITE_A, { wire: 'raw', body: '{"type": "message", "content": [' }]);
      expectOutcome(result, 'model_error', 6);
    });

    it('an event whose data is not JSON', async () => {
      const result = await runWithFaults([WRITE_A, { wire: 'stream', reply: WRITE_B, afterEvents: 5, then: 'garbage' }]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/malformed/);
    });

    it('a stream that ends before message_stop', async () => {
      // Everything up to and with message_delta (stop_reason tool_use) arrives, then the stream ends.
      const result = await runWithFaults([WRITE_A, { wire: 'stream', reply: WRITE_B, afterEvents: 14, then: 'end' }]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/ended early/);
    });
  });

  describe('bad tool calls go back as is_error results and the loop goes on', () => {
    it('a tool that does not exist', async () => {
      const result = await runWithFaults([
        WRITE_A,
        { content: [{ type: 'tool_use', id: 'toolu_unknown', name: 'Frobnicate', input: { x: 1 } }] },
        DONE,
      ]);
      expectOutcome(result, 'passed', 0);
      expect(toolResults(result.server, 2)).toEqual([
        expect.objectContaining({ tool_use_id: 'toolu_unknown', is_error: true, content: expect.stringMatching(/^Unknown tool "Frobnicate"\. The tools are: Bash, Read, Write/) }),
      ]);
    });

    it('input that does not match the tool schema (Write without content)', async () => {
      const result = await runWithFaults([
        WRITE_A,
        { content: [{ type: 'tool_use', id: 'toolu_bad', name: 'Write', input: { file_path: 'src/b.txt' } }] },
        DONE,
      ]);
      expectOutcome(result, 'passed', 0);
      const [only] = toolResults(result.server, 2);
      expect(only).toMatchObject({ tool_use_id: 'toolu_bad', is_error: true });
      expect(only!.content).toMatch(/^Invalid input for Write:\n- content: /);
    });
  });

  describe('stop reasons', () => {
    it('max_tokens in text: the loop asks the model to continue and the run goes on', async () => {
      const result = await runWithFaults([WRITE_A, { content: [{ type: 'text', text: 'A long expla' }], stop_reason: 'max_tokens' }, DONE]);
      expectOutcome(result, 'passed', 0);
      expect(JSON.stringify(lastUserContent(result.server, 2))).toMatch(/cut off at the output token limit/);
    });

    it('max_tokens inside a tool call: the call, whose input may be cut, is not run but answered as is_error', async () => {
      const cut: ScriptReply = {
        content: [
          { type: 'text', text: 'Now b, whose content the limit cuts.' },
          { type: 'tool_use', id: 'toolu_cut', name: 'Write', input: { file_path: 'src/b.txt', content: 'half a fi' } },
        ],
        stop_reason: 'max_tokens',
      };
      const result = await runWithFaults([WRITE_A, cut, DONE]);
      expectOutcome(result, 'passed', 0);
      const [only] = toolResults(result.server, 2);
      expect(only).toMatchObject({ tool_use_id: 'toolu_cut', is_error: true });
      expect(only!.content).toMatch(/cut off at the output token limit/);
    });

    it('pause_turn: the conversation goes back as it is and the model continues', async () => {
      const result = await runWithFaults([WRITE_A, { content: [{ type: 'text', text: 'Still working' }], stop_reason: 'pause_turn' }, DONE]);
      expectOutcome(result, 'passed', 0);
      expect(result.server.requests[2]!.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: [{ type: 'text', text: 'Still working' }] });
    });

    it('refusal: refused, exit 5', async () => {
      const result = await runWithFaults([WRITE_A, { content: [{ type: 'text', text: 'I will not.' }], stop_reason: 'refusal' }]);
      expectOutcome(result, 'refused', 5);
    });

    it('model_context_window_exceeded: model_error, exit 6', async () => {
      const result = await runWithFaults([WRITE_A, { content: [{ type: 'text', text: 'Out of room' }], stop_reason: 'model_context_window_exceeded' }]);
      expectOutcome(result, 'model_error', 6);
      expect(result.report.reason).toMatch(/context window/);
    });
  });
});
