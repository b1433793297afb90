import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { startResponsesServer, type ResponsesServer } from '../support/responses-server.js';
import { repoWithFiles } from '../support/repo.js';

// The real Codex CLI under corral, against a local Responses API stand-in. It runs only
// where CORRAL_TEST_CODEX names the CLI, installed apart from this project (e.g.
// `npm install --prefix /var/tmp/codex @openai/codex@0.169.0`, then
// CORRAL_TEST_CODEX=/var/tmp/codex/node_modules/.bin/codex).

const CODEX = process.env.CORRAL_TEST_CODEX;
const KEY = 'sk-test-not-a-real-openai-key-0000';

let server: ResponsesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function runTicket(policy: Record<string, string[]>): Promise<{ exitCode: number; report: any; events: any[]; sent: string }> {
  server = await startResponsesServer([{ command: 'echo hi > b.txt' }, { text: 'Wrote b.txt.' }]);
  const repo = repoWithFiles({
    'corral.yaml': `agents:\n  codex:\n    command: ${JSON.stringify(CODEX)}\n`,
    'ticket.yaml': `${JSON.stringify({ task: 'Write hi to b.txt.', allow: ['b.txt'], agent: 'codex', model: 'gpt-5', checks: ['grep -q hi b.txt'], check_rounds: 0, policy })}\n`,
    'a.txt': 'x\n',
  });
  const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { OPENAI_API_KEY: KEY, OPENAI_BASE_URL: server.url, NO_COLOR: '1' }, timeoutMs: 240_000 });
  const report = runReport(run.stdout);
  const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
  if (report.status === undefined) console.log(run.stderr.slice(-3000));
  return { exitCode: run.exitCode, report, events, sent: server.requests.map((r) => r.body).join('\n') };
}

describe.skipIf(CODEX === undefined)(`the real Codex CLI under corral${CODEX === undefined ? ' (skipped: set CORRAL_TEST_CODEX=/path/to/codex to run it)' : ` (${CODEX})`}`, () => {
  it("runs its shell call only after corral's guard allowed it, through the model proxy, then the fence and checks", async () => {
    const { exitCode, report, events } = await runTicket({ allow: ['Bash(echo:*)'] });
    expect(exitCode).toBe(0);
    expect(report.status).toBe('passed');
    expect(events.filter((e) => e.type === 'decision').map((e) => [e.tool, e.effect])).toEqual([['Bash', 'allow']]);
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['b.txt']);
    // The key went to the API from the proxy outside the sandbox; Codex held a placeholder.
    expect(server!.requests.every((r) => r.headers.authorization === `Bearer ${KEY}`)).toBe(true);
  });

  it("denies a call the ticket's rules deny, with corral's rule as the reason the model gets", async () => {
    const { exitCode, report, events, sent } = await runTicket({ deny: ['Bash(echo:*)'] });
    expect(events.filter((e) => e.type === 'decision').map((e) => [e.tool, e.effect, e.rule])).toEqual([['Bash', 'deny', 'Bash(echo:*)']]);
    expect(sent).toContain('Rule: Bash(echo:*)');
    // The command never ran, so the check fails: exit 1, never 0.
    expect(report.status).toBe('failed');
    expect(exitCode).toBe(1);
    expect(report.changes).toEqual([]);
  });
});
