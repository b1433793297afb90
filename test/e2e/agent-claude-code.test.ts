import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { execa } from 'execa';
import { jsonLines, NO_USER_CONFIG, PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { extraWorktrees, gitIn, repoWithFiles } from '../support/repo.js';

// `agent: claude-code` end to end through the real CLI, with the fake Claude Code of
// test/fixtures/fake-claude.mjs: it speaks stream-json and calls the PreToolUse hook from
// its --settings file as Claude Code does, so every call goes through corral's guard.

const FAKE_CLAUDE = path.join(PROJECT_ROOT, 'test', 'fixtures', 'fake-claude.mjs');

type Step = Record<string, unknown>;

/** A repository whose corral.yaml names the fake CLI, with a ticket and the fake's script. */
function agentRepo(sessions: Step[][], ticket: Record<string, unknown> = {}, extraFiles: Record<string, string> = {}): string {
  const fields = { task: 'Add a greeting.', allow: ['src/**'], agent: 'claude-code', env: { FAKE_AGENT_SCRIPT: 'fake/script.json' }, ...ticket };
  return repoWithFiles({
    'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(FAKE_CLAUDE)}\n`,
    'ticket.yaml': `${JSON.stringify(fields)}\n`,
    'fake/script.json': JSON.stringify({ sessions }),
    'src/greet.js': 'export const greet = () => "hi";\n',
    ...extraFiles,
  });
}

const ENV = { ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key-000000', NO_COLOR: '1' };

function traceOf(report: { trace?: string }, repo: string): any[] {
  const file = report.trace ?? '';
  const text = readFileSync(path.isAbsolute(file) ? file : path.join(repo, file), 'utf8');
  return text.trim().split('\n').map((line) => JSON.parse(line));
}

describe('agent: claude-code runs under corral', () => {
  it('passes: the agent writes inside the fence, the checks pass, the branch is kept, the trace records its turns and calls', async () => {
    const repo = agentRepo(
      [[{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'export const hello = "hello";\n' } }, { tool: 'Bash', input: { command: 'cat src/hello.js' } }, { text: 'Added src/hello.js.\nQUEUE: greet.js has no test' }]],
      { checks: ['grep -q hello src/hello.js'] },
    );
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.stderr).not.toContain('internal error');
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.status).toBe('passed');
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['src/hello.js']);
    expect(gitIn(repo, ['show', 'corral/ticket:src/hello.js'])).toContain('hello');
    expect(extraWorktrees(repo)).toEqual([]);
    const events = traceOf(report, repo);
    expect(events.find((e) => e.type === 'agent')).toMatchObject({ kind: 'claude-code', version: '2.1.328' });
    expect(events.filter((e) => e.type === 'model_response').length).toBe(3);
    const calls = events.filter((e) => e.type === 'tool_call');
    expect(calls.map((c) => c.tool)).toEqual(['Write', 'Bash']);
    const decisions = events.filter((e) => e.type === 'decision');
    expect(decisions.map((d) => d.effect)).toEqual(['allow', 'allow']);
    expect(events.filter((e) => e.type === 'tool_result').map((r) => r.isError)).toEqual([false, false]);
    expect(events.filter((e) => e.type === 'tool_result')[1].output).toContain('hello');
    // `corral trace` reads it as any run's, saying which agent worked it.
    const trace = await runCli(['trace', path.dirname(report.trace)], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(trace.exitCode).toBe(0);
    expect(trace.stdout).toContain('(through claude-code 2.1.328)');
    expect(trace.stdout).toContain('2 tool calls · 0 denied');
  });

  it("denies a call the ticket's rules deny, inside the agent, with corral's rule as the reason, and records it", async () => {
    const repo = agentRepo(
      [[{ tool: 'Bash', input: { command: 'git status --short' } }, { tool: 'Write', input: { file_path: 'src/hello.js', content: 'hello\n' } }, { text: 'Done.' }]],
      { policy: { deny: ['Bash(git status:*)'] } },
    );
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.denied.map((d: { rule: string }) => d.rule)).toEqual(['Bash(git status:*)']);
    const events = traceOf(report, repo);
    expect(events.find((e) => e.type === 'decision' && e.effect === 'deny')).toMatchObject({ tool: 'Bash', rule: 'Bash(git status:*)', scope: 'ticket' });
    // What the agent was told is corral's refusal: the rule and why.
    const denied = events.find((e) => e.type === 'tool_result' && e.isError);
    expect(denied.output).toContain('Rule: Bash(git status:*)');
  });

  it('judges the result by the fence: a write outside allow that the agent makes through Bash is a fence violation (exit 2)', async () => {
    const repo = agentRepo([[{ tool: 'Bash', input: { command: 'echo changed >> README.md' } }, { text: 'Done.' }]], { policy: { allow: ['Bash(echo:*)'] } }, { 'README.md': 'readme\n' });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    const report = runReport(run.stdout);
    // Denied by the guard, or run and caught by the fence: either way nothing outside the fence is kept.
    if (report.status === 'fence_violated') {
      expect(run.exitCode).toBe(2);
      expect(report.changes.filter((c: any) => !c.allowed).map((c: any) => c.change.path)).toEqual(['README.md']);
    } else {
      expect(traceOf(report, repo).find((e) => e.type === 'decision')).toMatchObject({ effect: 'deny' });
    }
    expect(report.branch ?? null).toBeNull();
  });

  it('a Write outside the fence is denied by the guard before it runs', async () => {
    const repo = agentRepo([[{ tool: 'Write', input: { file_path: 'README.md', content: 'x\n' } }, { text: 'Done.' }]], { allow_empty: true }, { 'README.md': 'readme\n' });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    const report = runReport(run.stdout);
    const decision = traceOf(report, repo).find((e) => e.type === 'decision');
    expect(decision).toMatchObject({ tool: 'Write', effect: 'deny' });
    expect(report.changes).toEqual([]);
  });

  it('sends failing checks back by resuming the session, and passes once they are fixed', async () => {
    const repo = agentRepo(
      [
        [{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'helo\n' } }, { text: 'Done.' }],
        [{ tool: 'Edit', input: { file_path: 'src/hello.js', old_string: 'helo', new_string: 'hello' } }, { text: 'Fixed the typo.' }],
      ],
      { checks: ['grep -q hello src/hello.js'] },
    );
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.status).toBe('passed');
    const events = traceOf(report, repo);
    expect(events.filter((e) => e.type === 'check_round').map((e) => e.passed)).toEqual([false, true]);
    const sessions = events.filter((e) => e.type === 'agent' && e.sessionId !== undefined).map((e) => e.sessionId);
    // The second start resumed the first session.
    expect(sessions).toHaveLength(2);
    expect(sessions[1]).toBe(sessions[0]);
  });

  it('checks that never pass: exit 1 after check_rounds', async () => {
    const repo = agentRepo([[{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'helo\n' } }, { text: 'Done.' }]], { checks: ['grep -q hello src/hello.js'], check_rounds: 1 });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(1);
    expect(runReport(run.stdout).status).toBe('failed');
  });

  it('a step budget breached ends the agent and the run with exit 3', async () => {
    const many = Array.from({ length: 6 }, (_, i) => ({ tool: 'Bash', input: { command: `echo ${i}` } }));
    const repo = agentRepo([[...many, { text: 'Done.' }]], { budget: { steps: 2 }, policy: { allow: ['Bash(echo:*)'] } });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(3);
    const report = runReport(run.stdout);
    expect(report.budgetExhausted).toBe('steps');
    expect(traceOf(report, repo).filter((e) => e.type === 'decision' && e.effect === 'allow').length).toBeLessThanOrEqual(2);
  });

  it('a token budget breached ends the agent (exit 3)', async () => {
    const repo = agentRepo([[{ tool: 'Bash', input: { command: 'echo 1' }, usage: { input_tokens: 5000 } }, { tool: 'Bash', input: { command: 'echo 2' } }, { sleep: 60_000 }, { text: 'Done.' }]], { budget: { tokens: 1000 }, policy: { allow: ['Bash(echo:*)'] } });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(3);
    expect(runReport(run.stdout).budgetExhausted).toBe('tokens');
  });

  it('an API error is exit 6, a refusal exit 5, a crash of the CLI exit 70: never 0', async () => {
    const apiError = agentRepo([[{ api_error: '529 {"type":"overloaded_error"}' }]]);
    const api = await runCli(['run', 'ticket.yaml', '--json'], { cwd: apiError, env: ENV });
    expect(api.exitCode).toBe(6);
    expect(runReport(api.stdout).reason).toContain('overloaded');

    const refusal = agentRepo([[{ refusal: true }]]);
    const refused = await runCli(['run', 'ticket.yaml', '--json'], { cwd: refusal, env: ENV });
    expect(refused.exitCode).toBe(5);

    const crash = agentRepo([[{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'x\n' } }, { crash: 3 }]]);
    const crashed = await runCli(['run', 'ticket.yaml', '--json'], { cwd: crash, env: ENV });
    expect(crashed.exitCode).toBe(70);
    const report = runReport(crashed.stdout);
    expect(report.reason).toContain('exited 3');
    expect(report.reason).toContain('something broke inside');
    // The work is judged and kept all the same.
    expect(readFileSync(report.patch, 'utf8')).toContain('src/hello.js');
  });

  it('corral replay judges the recorded calls of a Claude Code run', async () => {
    const repo = agentRepo([[{ tool: 'Bash', input: { command: 'ls src' } }, { tool: 'Write', input: { file_path: 'src/hello.js', content: 'hello\n' } }, { text: 'Done.' }]]);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(0);
    const trace = path.relative(repo, runReport(run.stdout).trace);
    const same = await runCli(['replay', trace], { cwd: repo });
    expect(same.stdout).toBe('1 trace, 2 calls, 0 changed');
    writeFileSync(path.join(repo, 'corral.yaml'), `${readFileSync(path.join(repo, 'corral.yaml'), 'utf8')}policy: {deny: ["Bash(ls:*)"]}\n`);
    const changed = await runCli(['replay', trace], { cwd: repo });
    expect(changed.exitCode).toBe(1);
    expect(changed.stdout).toMatch(/Bash\(ls src\) {2}allow by \S+ → deny by Bash\(ls:\*\) \(project\)/);
  });

  it('the JSON report has the shape of a corral run, and a batch mixes agents', async () => {
    const repo = agentRepo([[{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'hello\n' } }, { text: 'Done.' }]], {}, {
      'own.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:own-script.yaml\n',
      'own-script.yaml': 'turns:\n  - tools:\n      - Write: {file_path: src/own.js, content: "own\\n"}\n  - text: done\n',
    });
    const run = await runCli(['run', 'ticket.yaml', 'own.yaml', '--json'], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(0);
    const { tickets } = jsonLines(run.stdout);
    expect(tickets).toHaveLength(2);
    const [a, b] = tickets;
    expect(Object.keys(a).sort()).toEqual(Object.keys(b).sort());
    expect(tickets.map((t: any) => t.status)).toEqual(['passed', 'passed']);
  });

  it('a missing or too old CLI is exit 64 before anything runs, naming the version needed', async () => {
    const missing = repoWithFiles({ 'corral.yaml': 'agents:\n  claude-code:\n    command: ./no-such-claude\n', 'ticket.yaml': 'task: t\nallow: ["**"]\nagent: claude-code\n' });
    const gone = await runCli(['run', 'ticket.yaml'], { cwd: missing, env: ENV });
    expect(gone.exitCode).toBe(64);
    expect(gone.stderr).toContain('2.1.0 or newer is needed');
    expect(existsSync(path.join(missing, '.corral'))).toBe(false);

    const old = agentRepo([[{ text: 'Done.' }]]);
    const tooOld = await runCli(['run', 'ticket.yaml'], { cwd: old, env: { ...ENV, FAKE_CLAUDE_VERSION: '1.0.3' } });
    expect(tooOld.exitCode).toBe(64);
    expect(tooOld.stderr).toContain('version 1.0.3; claude-code 2.1.0 or newer is needed');

    // `--agent` picks the agent for tickets of corral's own, and is checked the same way.
    const own = repoWithFiles({ 'ticket.yaml': 'task: t\nallow: ["**"]\n' });
    const override = await runCli(['run', 'ticket.yaml', '--agent', 'claude-code'], { cwd: own, env: { ...ENV, PATH: '/usr/bin:/bin' } });
    expect(override.exitCode).toBe(64);
    expect(override.stderr).toContain('`claude` is not on PATH');
  });

  it('Ctrl-C while the agent works ends its whole process group, keeps the work and exits 130', async () => {
    const repo = agentRepo([[{ tool: 'Write', input: { file_path: 'src/half.js', content: 'half done\n' } }, { tool: 'Bash', input: { command: 'echo agent-sleeper-$PPID; sleep 600' } }, { text: 'Done.' }]], { policy: { allow: ['Bash(echo:*)', 'Bash(sleep:*)'] } });
    const child = execa('node', [path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'run', 'ticket.yaml', '--json'], { cwd: repo, reject: false, stdin: 'ignore', env: { ...ENV, XDG_CONFIG_HOME: NO_USER_CONFIG, CLAUDE_CONFIG_DIR: NO_USER_CONFIG } });
    // Wait until the sleep was allowed: the agent is running it now.
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('step 2')) resolve();
      });
    });
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    const report = runReport(String(result.stdout));
    expect(report.status).toBe('interrupted');
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['src/half.js']);
    expect(extraWorktrees(repo)).toEqual([]);
    // Neither the fake agent nor the command it ran is left.
    const left = await execa('pgrep', ['-f', `FAKE_AGENT_SCRIPT|${path.basename(repo)}|agent-sleeper`], { reject: false });
    expect(String(left.stdout).trim()).toBe('');
  });

  it('an ask goes to the approver: unattended, it is refused inside the agent and written to approvals-needed.yaml', async () => {
    const repo = agentRepo([[{ tool: 'Bash', input: { command: 'npm publish --dry-run' } }, { tool: 'Write', input: { file_path: 'src/hello.js', content: 'hello\n' } }, { text: 'Done.' }]], { policy: { ask: ['Bash(npm publish:*)'] } });
    const run = await runCli(['run', 'ticket.yaml', '--json', '--unattended'], { cwd: repo, env: ENV });
    const report = runReport(run.stdout);
    const events = traceOf(report, repo);
    expect(events.find((e) => e.type === 'decision' && e.tool === 'Bash')).toMatchObject({ effect: 'ask', rule: 'Bash(npm publish:*)' });
    expect(events.find((e) => e.type === 'approval')).toMatchObject({ approved: false, by: 'unattended' });
    expect(events.find((e) => e.type === 'tool_result' && e.tool === 'Bash')).toMatchObject({ isError: true });
    expect(report.approvalsNeeded).toBeDefined();
    expect(readFileSync(report.approvalsNeeded, 'utf8')).toContain('npm publish');
  });

  it('a run directory too deep for a unix socket path puts the guard socket in a short folder of its own, removed after', async () => {
    const repo = agentRepo([[{ tool: 'Write', input: { file_path: 'src/hello.js', content: 'hello\n' } }, { text: 'Done.' }]]);
    const runsDir = path.join(repo, 'a-rather-long-folder-name-for-runs'.repeat(3));
    const run = await runCli(['run', 'ticket.yaml', '--json', '--runs-dir', runsDir], { cwd: repo, env: ENV });
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    const { agentControlDir } = await import('../../src/agents/drivers.js');
    const control = agentControlDir(path.dirname(report.trace));
    expect(control.startsWith(runsDir)).toBe(false);
    expect(existsSync(control)).toBe(false);
  });

  it('a minute budget ends an agent that takes too long (exit 3), and calls denied in a row stop it as blocked (exit 4)', async () => {
    const slow = agentRepo([[{ text: 'Thinking hard.' }, { sleep: 120_000 }, { text: 'Done.' }]], { budget: { minutes: 0.05 } });
    const minutes = await runCli(['run', 'ticket.yaml', '--json'], { cwd: slow, env: ENV });
    expect(minutes.exitCode).toBe(3);
    expect(runReport(minutes.stdout).budgetExhausted).toBe('minutes');

    const pushy = agentRepo([[...Array.from({ length: 8 }, () => ({ tool: 'Bash', input: { command: 'curl https://example.com' } })), { text: 'Done.' }]], { policy: { deny: ['Bash(curl:*)'] } });
    const blocked = await runCli(['run', 'ticket.yaml', '--json'], { cwd: pushy, env: ENV });
    expect(blocked.exitCode).toBe(4);
    const report = runReport(blocked.stdout);
    expect(report.reason).toContain('5 calls in a row were denied');
    expect(traceOf(report, pushy).filter((e) => e.type === 'decision').length).toBe(5);
  });
});
