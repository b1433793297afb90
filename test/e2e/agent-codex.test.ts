import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { repoWithFiles } from '../support/repo.js';

// `agent: codex` end to end through the real CLI, with the fake Codex of
// test/fixtures/fake-codex.mjs: it reads the hooks corral writes into its CODEX_HOME's
// config.toml and calls them for each shell command and patch, as Codex 0.124 does.

const FAKE_CODEX = path.join(PROJECT_ROOT, 'test', 'fixtures', 'fake-codex.mjs');

function codexRepo(sessions: Record<string, unknown>[][], ticket: Record<string, unknown> = {}): string {
  const fields = { task: 'Add a greeting.', allow: ['src/**'], agent: 'codex', env: { FAKE_AGENT_SCRIPT: 'fake/script.json' }, ...ticket };
  return repoWithFiles({
    'corral.yaml': `agents:\n  codex:\n    command: ${JSON.stringify(FAKE_CODEX)}\n`,
    'ticket.yaml': `${JSON.stringify(fields)}\n`,
    'fake/script.json': JSON.stringify({ sessions }),
    'src/greet.js': 'export const greet = () => "hi";\n',
  });
}

const events = (report: { trace: string }): any[] => readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line));

describe('agent: codex runs under corral', () => {
  it("judges its shell commands and patches with corral's guard, resumes it for failing checks, and passes", async () => {
    const patch = '*** Begin Patch\n*** Add File: src/hello.js\n+export const hello = "helo";\n*** End Patch';
    const fix = '*** Begin Patch\n*** Add File: src/hello.js\n+export const hello = "hello";\n*** End Patch';
    const repo = codexRepo(
      [
        [{ tool: 'Bash', input: { command: 'git status --short' } }, { tool: 'apply_patch', input: { command: patch } }, { text: 'Added src/hello.js.' }],
        [{ tool: 'apply_patch', input: { command: fix } }, { text: 'Fixed.' }],
      ],
      { checks: ['grep -q \'"hello"\' src/hello.js'], policy: { deny: ['Bash(git status:*)'] } },
    );
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(run.stderr).not.toContain('internal error');
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.status).toBe('passed');
    const trace = events(report);
    expect(trace.filter((e) => e.type === 'decision').map((e) => [e.tool, e.effect])).toEqual([
      ['Bash', 'deny'],
      ['Write', 'allow'],
      ['Write', 'allow'],
    ]);
    expect(trace.find((e) => e.type === 'decision' && e.effect === 'deny')).toMatchObject({ rule: 'Bash(git status:*)' });
    expect(trace.filter((e) => e.type === 'check_round').map((e) => e.passed)).toEqual([false, true]);
    expect(trace.filter((e) => e.type === 'model_response').length).toBe(2);
  });

  it('a patch outside the fence is denied before it is applied; a turn that fails is exit 6, a crash 70', async () => {
    const outside = codexRepo([[{ tool: 'apply_patch', input: { command: '*** Begin Patch\n*** Add File: README.md\n+x\n*** End Patch' } }, { text: 'Done.' }]], { allow_empty: true });
    const denied = await runCli(['run', 'ticket.yaml', '--json'], { cwd: outside });
    const report = runReport(denied.stdout);
    expect(report.changes).toEqual([]);
    expect(events(report).find((e) => e.type === 'decision')).toMatchObject({ tool: 'Write', effect: 'deny' });

    const failing = codexRepo([[{ api_error: 'stream disconnected before completion: 500 Internal Server Error' }]]);
    const api = await runCli(['run', 'ticket.yaml', '--json'], { cwd: failing });
    expect(api.exitCode).toBe(6);
    expect(runReport(api.stdout).reason).toContain('500 Internal Server Error');

    const crashing = codexRepo([[{ crash: 101 }]]);
    const crashed = await runCli(['run', 'ticket.yaml', '--json'], { cwd: crashing });
    expect(crashed.exitCode).toBe(70);
    expect(runReport(crashed.stdout).reason).toContain('panicked');
  });

  it("a call that ran without corral's guard (Codex skipped the hook) stops the run, blocked, never passed", async () => {
    const repo = codexRepo([[{ tool: 'Bash', input: { command: "printf 'export const x = 1;\\n' > src/x.js" } }, { text: 'Done.' }]], {
      env: { FAKE_AGENT_SCRIPT: 'fake/script.json', FAKE_CODEX_SKIP_HOOKS: '1' },
    });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(run.exitCode).toBe(4);
    expect(report.status).toBe('blocked');
    expect(report.reason).toContain("corral's guard never judged");
    expect(events(report).filter((e) => e.type === 'decision')).toEqual([]);
  });
});
