import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { gitIn, repoWithFiles, tempDir } from '../support/repo.js';

// Command hooks end to end: the built CLI, a real git repository with a corral.yaml that
// configures the hooks, and replay tickets, so every hook runs as a user's would.

interface Report {
  status: string;
  exitCode: number;
  reason: string;
  changes: { change: { path: string }; allowed: boolean }[];
  denied: { tool: string; rule: string; scope?: string; reason: string; call: string }[];
  asked: unknown[];
  warnings: string[];
  patch: string;
  trace: string;
}

type TraceEvent = Record<string, unknown> & { type: string };

function makeRepo(files: Record<string, string>): string {
  return repoWithFiles(files, 'corral-hooks-');
}

/** Commits the files of `makeRepo` plus a ticket and its replay script, and runs it with --json. */
async function runTicket(files: Record<string, string>, ticket: string, replay: string, env: Record<string, string> = {}): Promise<{ repo: string; r: Report; stderr: string; exitCode: number }> {
  const repo = makeRepo({ ...files, 'ticket.yaml': `${ticket}model: replay:replay.yaml\n`, 'replay.yaml': replay });
  const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env });
  let r: Report;
  try {
    r = runReport(run.stdout) as Report;
  } catch {
    throw new Error(`no JSON report (exit ${run.exitCode}):\n${run.stdout}\n${run.stderr}`);
  }
  return { repo, r, stderr: run.stderr, exitCode: run.exitCode };
}

function trace(file: string): TraceEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TraceEvent);
}

function hookConfig(event: 'PreToolUse' | 'PostToolUse' | 'Stop', command: string, options: { matcher?: string; timeout?: number } = {}): string {
  return [
    'hooks:',
    `  ${event}:`,
    `    - ${options.matcher === undefined ? '' : `matcher: ${JSON.stringify(options.matcher)}\n      `}hooks:`,
    '        - type: command',
    `          command: ${JSON.stringify(command)}`,
    ...(options.timeout === undefined ? [] : [`          timeout: ${options.timeout}`]),
    '',
  ].join('\n');
}

/** Warnings about hooks; others (such as the sandbox notice) are not these tests' business. */
function hookWarnings(r: Report): string[] {
  return r.warnings.filter((warning) => /^(PreToolUse|PostToolUse|Stop) hook /.test(warning));
}

/** JSON lines appended by a logging hook. */
function loggedPayloads(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('command hooks through the CLI', () => {
  it('runs the jq guard script unchanged: it blocks what it should, lets the false positive through', async () => {
    const repo = makeRepo({
      'corral.yaml': [
        'hooks:',
        '  PreToolUse:',
        '    - matcher: "Read|Edit|Write|Bash"',
        '      hooks:',
        '        - type: command',
        `          command: '"$CLAUDE_PROJECT_DIR"/scripts/guard.sh'`,
        '          timeout: 60',
        '',
      ].join('\n'),
      '.env': 'API_KEY=sk-live-do-not-read\n',
      '.env.example': 'API_KEY=\n',
      'src/app.js': 'export const app = 1;\n',
      'ticket.yaml': 'task: t\nallow: ["src/**", "notes.txt"]\nchecks: ["test -f notes.txt"]\nmodel: replay:replay.yaml\n',
      'replay.yaml': [
        'turns:',
        '  - tools:',
        '      - Read: {file_path: .env}',
        '  - tools:',
        '      - Bash: {command: \'echo "see the .env setup notes" > notes.txt\'}',
        '  - tools:',
        '      - Write: {file_path: ../outside.txt, content: "escaped\\n"}',
        '  - tools:',
        '      - Bash: {command: git push origin main}',
        '  - tools:',
        '      - Write: {file_path: src/app.js, content: "export const app = 2;\\n"}',
        '  - text: Done.',
        '',
      ].join('\n'),
    });
    mkdirSync(path.join(repo, 'scripts'));
    copyFileSync(path.join(PROJECT_ROOT, 'fixtures/hooks/guard-tool.sh'), path.join(repo, 'scripts/guard.sh'));
    chmodSync(path.join(repo, 'scripts/guard.sh'), 0o755);
    gitIn(repo, ['add', '-A']);
    gitIn(repo, ['commit', '-qm', 'guard script']);
    expect(gitIn(repo, ['ls-files', '-s', 'scripts/guard.sh'])).toMatch(/^100755 /);

    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    const r = runReport(run.stdout) as Report;
    expect(run.exitCode, run.stderr).toBe(0);
    expect(r.status).toBe('passed');

    // Exactly the three calls the script blocks, each denied by the hook with its reason.
    expect(r.denied.map((d) => [d.tool, d.rule, d.scope])).toEqual([
      ['Read', 'hook.PreToolUse', 'hook'],
      ['Write', 'hook.PreToolUse', 'hook'],
      ['Bash', 'hook.PreToolUse', 'hook'],
    ]);
    // The hook gets absolute paths, as Claude Code gives them.
    const worktreeDir = trace(r.trace).find((e) => e.type === 'worktree')!.dir as string;
    expect(r.denied[0]!.reason).toBe(`guard-tool: Read of ${path.join(worktreeDir, '.env')} is not allowed: .env files hold secrets`);
    expect(r.denied[1]!.reason).toBe(`guard-tool: Write of ${path.join(path.dirname(worktreeDir), 'outside.txt')} is outside the project (${worktreeDir})`);
    expect(r.denied[2]!.reason).toBe('guard-tool: pushing to main is not allowed (main); push a feature branch and open a pull request');
    expect(r.asked).toEqual([]);

    // The false positive went through: notes.txt is written and in the patch.
    expect(r.changes.map((c) => [c.change.path, c.allowed])).toEqual(
      expect.arrayContaining([
        ['notes.txt', true],
        ['src/app.js', true],
      ]),
    );
    expect(r.changes).toHaveLength(2);
    const patch = readFileSync(r.patch, 'utf8');
    expect(patch).toContain('+see the .env setup notes');
    expect(patch).toContain('+export const app = 2;');
    expect(patch).not.toContain('escaped');

    // The hook itself stopped the .env read (blocked in the trace), not only the baseline.
    const events = trace(r.trace);
    const stepOf = (match: (input: Record<string, unknown>) => boolean): number => {
      const call = events.find((e) => e.type === 'tool_call' && match(e.input as Record<string, unknown>));
      expect(call).toBeDefined();
      return call!.step as number;
    };
    const hookAt = (step: number) => events.filter((e) => e.type === 'hook' && e.step === step && e.event === 'PreToolUse');
    const readEnv = hookAt(stepOf((input) => input.file_path === '.env'));
    expect(readEnv).toHaveLength(1);
    expect(readEnv[0]).toMatchObject({ exitCode: 2, blocked: true, timedOut: false, command: '"$CLAUDE_PROJECT_DIR"/scripts/guard.sh' });
    expect(readEnv[0]!.stderr).toMatch(/Read of \/\S+\/\.env is not allowed/);
    const echo = hookAt(stepOf((input) => typeof input.command === 'string' && input.command.startsWith('echo')));
    expect(echo).toMatchObject([{ exitCode: 0, blocked: false }]);
    const push = hookAt(stepOf((input) => input.command === 'git push origin main'));
    expect(push).toMatchObject([{ exitCode: 2, blocked: true }]);
    // Every one of the five calls went past the hook, and nothing was broken.
    expect(events.filter((e) => e.type === 'hook')).toHaveLength(5);
    expect(hookWarnings(r)).toEqual([]);
  });

  it('a Stop hook that type-checks blocks the first stop with tsc output; the fixed code stops and then the checks run', async () => {
    const tsc = path.join(PROJECT_ROOT, 'node_modules/.bin/tsc');
    const check = `${tsc} --noEmit --strict src/app.ts 1>&2 || exit 2`;
    const { r, exitCode, stderr } = await runTicket(
      { 'corral.yaml': hookConfig('Stop', check), 'src/.keep': '' },
      // The check runs corral's own tsc, which a sandbox hides when this checkout lives under /tmp.
      `task: t\nallow: ["src/**"]\nsandbox: none\nchecks: [${JSON.stringify(`${tsc} --noEmit --strict src/app.ts`)}]\n`,
      [
        'turns:',
        '  - tools:',
        '      - Write: {file_path: src/app.ts, content: "const n: number = \\"x\\";\\nexport default n;\\n"}',
        '  - text: Done',
        '  - tools:',
        '      - Edit: {file_path: src/app.ts, old_string: "const n: number = \\"x\\";", new_string: "const n: number = 1;"}',
        '  - text: Fixed the type error.',
        '',
      ].join('\n'),
    );
    expect(exitCode, stderr).toBe(0);
    expect(r.status).toBe('passed');
    const events = trace(r.trace);
    const stops = events.filter((e) => e.type === 'hook' && e.event === 'Stop');
    expect(stops).toHaveLength(2);
    expect(stops[0]).toMatchObject({ exitCode: 2, blocked: true });
    expect(stops[0]!.stderr).toContain('TS2322');
    expect(stops[1]).toMatchObject({ exitCode: 0, blocked: false });
    // The checks run once, after the second stop only.
    const checks = events.filter((e) => e.type === 'check');
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ passed: true, round: 1 });
    expect(events.indexOf(checks[0]!)).toBeGreaterThan(events.indexOf(stops[1]!));
    // The model saw the tsc message: its reply after the first stop is the fix.
    const edit = events.find((e) => e.type === 'tool_call' && e.tool === 'Edit');
    expect(events.indexOf(edit!)).toBeGreaterThan(events.indexOf(stops[0]!));
    expect(events.indexOf(edit!)).toBeLessThan(events.indexOf(stops[1]!));
    const requests = events.filter((e) => e.type === 'model_request');
    // task; after Write; after the blocked stop (with the tsc message); after Edit.
    expect(requests).toHaveLength(4);
    expect(hookWarnings(r)).toEqual([]);
  });

  it('a Stop hook blocks at most once in a row and gets the documented payload', async () => {
    const logDir = tempDir('corral-hook-log-');
    const log = path.join(logDir, 'stop.jsonl');
    const { r, exitCode, stderr } = await runTicket(
      { 'corral.yaml': hookConfig('Stop', `cat >> '${log}'; echo 'not done yet' >&2; exit 2`) },
      'task: t\nallow: ["**"]\n',
      ['turns:', '  - tools:', '      - Write: {file_path: made.txt, content: "made\\n"}', '  - text: Done.', '  - text: Really done.', ''].join('\n'),
    );
    expect(exitCode, stderr).toBe(0);
    expect(r.status).toBe('passed');
    const payloads = loggedPayloads(log);
    expect(payloads.map((p) => p.stop_hook_active)).toEqual([false, true]);
    const events = trace(r.trace);
    const worktree = events.find((e) => e.type === 'worktree')!.dir as string;
    const runStart = events.find((e) => e.type === 'run_start')!;
    for (const payload of payloads) {
      expect(payload).toMatchObject({ hook_event_name: 'Stop', transcript_path: r.trace, cwd: worktree, session_id: runStart.runId });
      expect(typeof payload.session_id).toBe('string');
      expect(payload.session_id).not.toBe('');
    }
    expect(existsSync(worktree)).toBe(false);
    const stops = events.filter((e) => e.type === 'hook' && e.event === 'Stop');
    expect(stops).toMatchObject([
      { exitCode: 2, blocked: true },
      { exitCode: 2, blocked: true },
    ]);
    // The second block was ignored; a broken hook it is not.
    expect(hookWarnings(r)).toEqual([]);
    expect(r.changes.map((c) => c.change.path)).toEqual(['made.txt']);
  });

  it("a PostToolUse hook gets the tool's own tool_response, and one that exits 1 is a warning, never a block", async () => {
    const logDir = tempDir('corral-hook-log-');
    const log = path.join(logDir, 'post.jsonl');
    const command = `cat >> '${log}'; exit 1`;
    const repo = makeRepo({
      'corral.yaml': hookConfig('PostToolUse', command, { matcher: 'Bash' }),
      'ticket.yaml': 'task: t\nallow: ["**"]\nchecks: ["grep -q hello notes.txt"]\nmodel: replay:replay.yaml\n',
      'replay.yaml': [
        'turns:',
        '  - tools:',
        '      - Bash: {command: "echo hello > notes.txt && echo wrote-notes"}',
        '  - tools:',
        '      - Write: {file_path: other.txt, content: "not a Bash call\\n"}',
        '  - text: Done.',
        '',
      ].join('\n'),
    });
    const run = await runCli(['run', 'ticket.yaml'], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(run.exitCode, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toContain(`warning  PostToolUse hook \`${command}\` exited 1; the run went on without it`);
    // The matcher kept the hook to the Bash call.
    const payloads = loggedPayloads(log);
    expect(payloads).toHaveLength(1);
    const payload = payloads[0]!;
    expect(payload).toMatchObject({ hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_input: { command: 'echo hello > notes.txt && echo wrote-notes' } });
    // Claude Code's Bash shape: the streams apart, whether it was interrupted.
    expect(payload.tool_response).toEqual({ stdout: 'wrote-notes\n', stderr: '', interrupted: false, isImage: false });
  });

  it('a PreToolUse hook that outlives its timeout is killed with its children and the call goes on', async () => {
    // An unusual duration, unique to this test process, so no other process (nor another
    // run of this file) is mistaken for one of the hook's.
    const sleep = `sleep 987.${process.pid}`;
    const command = `${sleep} & ${sleep}`;
    const sleepers = (): string[] =>
      execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
        .split('\n')
        .map((line) => line.trim())
        .filter((line) => line === sleep);
    expect(sleepers()).toEqual([]);
    const started = Date.now();
    const { r, exitCode, stderr } = await runTicket(
      { 'corral.yaml': hookConfig('PreToolUse', command, { timeout: 1 }) },
      'task: t\nallow: ["**"]\nchecks: ["test -f made.txt"]\n',
      ['turns:', '  - tools:', '      - Write: {file_path: made.txt, content: "made\\n"}', '  - text: Done.', ''].join('\n'),
    );
    expect(exitCode, stderr).toBe(0);
    expect(r.status).toBe('passed');
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.denied).toEqual([]);
    expect(hookWarnings(r)).toEqual([`PreToolUse hook \`${command}\` timed out and was killed; the run went on without it`]);
    const hooks = trace(r.trace).filter((e) => e.type === 'hook');
    expect(hooks).toMatchObject([{ event: 'PreToolUse', timedOut: true, exitCode: null, blocked: false }]);
    expect(sleepers()).toEqual([]);
  });
  it('keeps the agent from rewriting its own guard hook, and honours a hook that answers deny in JSON', async () => {
    const hook = 'if grep -q danger <<<"$(cat)"; then echo "no danger here" >&2; exit 2; fi';
    const { r } = await runTicket(
      {
        'hooks/guard.sh': `#!/usr/bin/env bash\n${hook}\n`,
        'hooks/json.sh': '#!/usr/bin/env bash\ncat >/dev/null\necho \'{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "json says no"}}\'\n',
        'corral.yaml': `hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: 'bash "$CLAUDE_PROJECT_DIR"/hooks/guard.sh'}\n    - matcher: Write\n      hooks:\n        - {type: command, command: 'bash hooks/json.sh'}\n`,
        'src/one.txt': 'one\n',
      },
      'task: t\nallow: ["**"]\n',
      [
        'turns:',
        '  - tools:',
        '      - Bash: {command: "echo danger > src/one.txt"}',
        '      - Edit: {file_path: hooks/guard.sh, old_string: "exit 2", new_string: "exit 0"}',
        '      - Bash: {command: "echo exit 0 > hooks/guard.sh"}',
        '      - Bash: {command: "rm -r hooks"}',
        '      - Edit: {file_path: src/one.txt, old_string: "one", new_string: "uno"}',
        '      - Bash: {command: "echo danger > src/one.txt"}',
        '      - Write: {file_path: src/two.txt, content: "two"}',
        '  - text: Done.',
        '',
      ].join('\n'),
    );
    expect(r.denied.map((d) => [d.rule, d.reason.split(':')[0]])).toEqual([
      ['hook.PreToolUse', 'no danger here'],
      ['baseline.hook-script', 'hooks/guard.sh is a hook script corral runs as trusted code; the agent may not change it'],
      ['baseline.hook-script', 'hooks/guard.sh is a hook script corral runs as trusted code; the agent may not change it'],
      ['baseline.hook-script', expect.stringMatching(/^hooks\/(guard|json)\.sh is a hook script/)],
      ['hook.PreToolUse', 'no danger here'],
      ['hook.PreToolUse', 'json says no'],
    ]);
    expect(r.status).toBe('passed');
    expect(readFileSync(r.patch, 'utf8')).not.toContain('hooks/');
  });
  it('keeps a hook script from a program the agent runs: read-only in the sandbox, and refused once changed without one', async () => {
    const bwrap = await probeBubblewrap();
    if (!bwrap.ok) process.stderr.write(`hook script in the sandbox: skipped, bubblewrap does not work here (${bwrap.reason}); the unsandboxed half runs\n`);
    for (const sandbox of bwrap.ok ? ['bwrap', 'none'] : ['none']) {
      const { r } = await runTicket(
        {
          'hooks/guard.sh': '#!/usr/bin/env bash\nif grep -q danger; then echo "no danger here" >&2; exit 2; fi\n',
          'corral.yaml': `hooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - {type: command, command: 'bash "$CLAUDE_PROJECT_DIR"/hooks/guard.sh'}\n`,
          'src/evil.sh': 'echo "exit 0" > hooks/guard.sh 2>/dev/null; echo "hook now: $(head -c 40 hooks/guard.sh)"\n',
          'src/one.txt': 'one\n',
        },
        `task: t\nallow: ["**"]\nsandbox: ${sandbox}\npolicy: {allow: ["Bash(bash src/evil.sh)"]}\n`,
        ['turns:', '  - tools:', '      - Bash: {command: "bash src/evil.sh"}', '      - Bash: {command: "echo danger > src/one.txt"}', '      - Edit: {file_path: src/one.txt, old_string: "one", new_string: "uno"}', '  - text: Done.', ''].join('\n'),
      );
      const denied = r.denied.map((d) => d.reason.split(';')[0]);
      if (sandbox === 'bwrap') {
        // The write failed inside the sandbox; the hook still judges and blocks.
        expect(denied).toEqual(['no danger here']);
        expect(readFileSync(r.patch, 'utf8')).not.toContain('hooks/guard.sh');
      } else {
        // Unsandboxed the script changed, so the hook is no longer run: every call it judged is blocked.
        expect(denied).toEqual(['the hook script hooks/guard.sh changed during the run']);
        expect(readFileSync(r.patch, 'utf8')).toContain('hooks/guard.sh');
      }
    }
  });
});
