import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer } from '../support/messages-server.js';
import { repoWithFiles } from '../support/repo.js';

// The repository's AGENTS.md and CLAUDE.md reach the model in the first request's system
// prompt, labelled with their paths; the report, the summary and the trace say which.

const FAKE_KEY = 'sk-ant-test-0123456789abcdefghijklmnop';

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function repo(ticketExtra = ''): string {
  return repoWithFiles(
    {
      'AGENTS.md': '# Agents\nRun `make lint` before you finish.\n',
      'CLAUDE.md': 'Prefer small functions.\n',
      'src/api/AGENTS.md': 'Every handler validates its input with zod.\n',
      'docs/AGENTS.md': 'Docs use sentence case.\n',
      'src/api/h.ts': 'export {};\n',
      'ticket.yaml': `task: Add a handler.\nallow: ["src/api/**"]\nsandbox: none\nallow_empty: true\nmodel: claude-sonnet-4-6\n${ticketExtra}`,
    },
    'corral-instructions-',
  );
}

async function run(cwd: string, json: boolean) {
  server = await startMessagesServer([{ content: [{ type: 'text', text: 'Nothing to do.' }] }]);
  return runCli(['run', 'ticket.yaml', ...(json ? ['--json'] : [])], { cwd, env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url, NO_COLOR: '1' } });
}

describe('AGENTS.md and CLAUDE.md in the system prompt', () => {
  it('the first request carries the root AGENTS.md, CLAUDE.md and the nested AGENTS.md on the way to the allow paths, each labelled', async () => {
    const cwd = repo();
    const result = await run(cwd, true);
    expect(result.exitCode, result.stderr).toBe(0);
    const system = (server!.requests[0]!.body as any).system[0].text as string;
    expect(system).toContain('<instructions path="AGENTS.md">\n# Agents\nRun `make lint` before you finish.\n</instructions>');
    expect(system).toContain('<instructions path="CLAUDE.md">\nPrefer small functions.\n</instructions>');
    expect(system).toContain('<instructions path="src/api/AGENTS.md">\nEvery handler validates its input with zod.\n</instructions>');
    expect(system).not.toContain('sentence case');
    // Root first, the nearest last; corral's own rules before them all.
    expect(system.indexOf('You may change only paths matching')).toBeLessThan(system.indexOf('path="AGENTS.md"'));
    expect(system.indexOf('path="AGENTS.md"')).toBeLessThan(system.indexOf('path="src/api/AGENTS.md"'));

    const report = runReport(result.stdout);
    expect(report.instructions).toEqual(['AGENTS.md', 'CLAUDE.md', 'src/api/AGENTS.md']);
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(events.find((e) => e.type === 'instructions')).toMatchObject({ files: [{ path: 'AGENTS.md', cut: false }, { path: 'CLAUDE.md' }, { path: 'src/api/AGENTS.md' }], omitted: [] });
  });

  it('the summary names them; `instructions: false` in the ticket leaves them out and says so in the trace', async () => {
    const shown = await run(repo(), false);
    expect(shown.stdout).toMatch(/^ {2}read {5}AGENTS\.md, CLAUDE\.md, src\/api\/AGENTS\.md$/m);
    await server!.close();

    const cwd = repo('instructions: false\n');
    const off = await run(cwd, true);
    expect(off.exitCode, off.stderr).toBe(0);
    const system = (server!.requests[0]!.body as any).system[0].text as string;
    expect(system).not.toContain('make lint');
    expect(system).not.toContain('<instructions');
    const report = runReport(off.stdout);
    expect(report.instructions).toEqual([]);
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(events.find((e) => e.type === 'instructions')).toMatchObject({ files: [], off: true });
  });
});
