import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer } from '../support/messages-server.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// Hooks written for Claude Code, run unchanged through the built CLI on real repositories:
// the input they read (absolute paths, tool_use_id, permission_mode, each tool's own
// tool_response) and the answers they give (updatedInput, additionalContext, continue).

type TraceEvent = Record<string, any> & { type: string };

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function trace(file: string): TraceEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TraceEvent);
}

/** A `hooks:` block with one group per entry, in corral.yaml. */
function hooksYaml(groups: { event: string; matcher?: string; command: string; extra?: string }[]): string {
  const byEvent = new Map<string, string[]>();
  for (const group of groups) {
    const lines = byEvent.get(group.event) ?? [];
    lines.push(`    - ${group.matcher === undefined ? '' : `matcher: ${JSON.stringify(group.matcher)}\n      `}hooks:`, '        - type: command', `          command: ${JSON.stringify(group.command)}`);
    if (group.extra) lines.push(`          ${group.extra}`);
    byEvent.set(group.event, lines);
  }
  return ['hooks:', ...[...byEvent].flatMap(([event, lines]) => [`  ${event}:`, ...lines]), ''].join('\n');
}

async function runTicket(files: Record<string, string>, ticket: string, turns: string[], env: Record<string, string> = {}) {
  const repo = repoWithFiles({ ...files, 'ticket.yaml': `${ticket}model: replay:replay.yaml\n`, 'replay.yaml': ['turns:', ...turns, ''].join('\n') }, 'corral-cc-hooks-');
  const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env });
  let report: any;
  try {
    report = runReport(run.stdout);
  } catch {
    throw new Error(`no JSON report (exit ${run.exitCode}):\n${run.stdout}\n${run.stderr}`);
  }
  return { repo, run, report, events: trace(report.trace) as TraceEvent[] };
}

// The seed guard from the harness-engineering notes, as people write it for Claude Code:
// any path outside the project is blocked, which only works if the path is absolute.
const SEED_GUARD = 'root=$(pwd); path=$(jq -r .tool_input.file_path); case "$path" in "$root"/*) exit 0;; *) echo block >&2; exit 2;; esac';

// The shape of Claude Code's documented Bash command validator (examples/hooks): a python3
// PreToolUse hook that reads the event from stdin and blocks `grep` and `find -name` with
// a message on stderr and exit 2.
const BASH_VALIDATOR = `#!/usr/bin/env python3
import json
import re
import sys

RULES = [
    (r"^grep\\b(?!.*\\|)", "Use 'rg' (ripgrep) instead of 'grep' for better performance and features"),
    (r"^find\\s+\\S+\\s+-name\\b", "Use 'rg --files -g pattern' instead of 'find -name' for better performance"),
]

try:
    data = json.load(sys.stdin)
except json.JSONDecodeError as error:
    print(f"Error: Invalid JSON input: {error}", file=sys.stderr)
    sys.exit(1)

if data.get("tool_name", "") != "Bash":
    sys.exit(0)
command = data.get("tool_input", {}).get("command", "")
issues = [message for pattern, message in RULES if re.search(pattern, command)]
if issues:
    for message in issues:
        print(f"• {message}", file=sys.stderr)
    sys.exit(2)
`;

// The file-protection hook of Claude Code's hooks guide, a python3 one-liner on
// Edit|MultiEdit|Write: exit 2 when file_path holds .env, package-lock.json or .git/.
const FILE_PROTECTION = `python3 -c "import json, sys; data=json.load(sys.stdin); path=data.get('tool_input',{}).get('file_path',''); sys.exit(2 if any(p in path for p in ['.env', 'package-lock.json', '.git/']) else 0)"`;

describe('Claude Code hooks, unchanged', () => {
  it('the seed guard script passes relative paths inside the worktree and blocks the one outside; the trace keeps what the model wrote', async () => {
    const { report, events, run } = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'PreToolUse', matcher: 'Write|Edit', command: SEED_GUARD }]), 'src/.keep': '' },
      'task: t\nallow: ["src/**"]\nsandbox: none\n',
      [
        '  - tools:',
        '      - Write: {file_path: src/helper.js, content: "export const helper = 1;\\n"}',
        '      - Edit: {file_path: ./src/helper.js, old_string: "= 1", new_string: "= 2"}',
        '      - Write: {file_path: ../outside.txt, content: "escaped\\n"}',
        '  - text: Done.',
      ],
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(report.status).toBe('passed');
    expect(report.denied.map((d: any) => [d.tool, d.rule, d.reason])).toEqual([['Write', 'hook.PreToolUse', 'block']]);
    expect(readFileSync(report.patch, 'utf8')).toContain('+export const helper = 2;');
    // The model's own paths stay in the trace.
    expect(events.filter((e) => e.type === 'tool_call').map((e) => e.input.file_path)).toEqual(['src/helper.js', './src/helper.js', '../outside.txt']);
  });

  it("Claude Code's Bash command validator and file-protection hook run unchanged", async () => {
    const { report, run } = await runTicket(
      {
        '.claude/hooks/bash_command_validator.py': BASH_VALIDATOR,
        'corral.yaml': hooksYaml([
          { event: 'PreToolUse', matcher: 'Bash', command: 'python3 "$CLAUDE_PROJECT_DIR"/.claude/hooks/bash_command_validator.py' },
          { event: 'PreToolUse', matcher: 'Edit|MultiEdit|Write', command: FILE_PROTECTION },
        ]),
        'package-lock.json': '{}\n',
        'src/a.txt': 'needle\n',
      },
      'task: t\nallow: ["**"]\nsandbox: none\n',
      [
        '  - tools:',
        '      - Bash: {command: "grep needle src/a.txt"}',
        '      - Bash: {command: "find . -name a.txt"}',
        '      - Bash: {command: "grep needle src/a.txt | wc -l"}',
        '      - Write: {file_path: .env, content: "SECRET=1\\n"}',
        '      - Edit: {file_path: package-lock.json, old_string: "{}", new_string: "{\\"x\\": 1}"}',
        '      - Write: {file_path: src/b.txt, content: "fine\\n"}',
        '  - text: Done.',
      ],
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(report.denied.map((d: any) => [d.tool, d.rule, d.reason])).toEqual([
      ['Bash', 'hook.PreToolUse', "• Use 'rg' (ripgrep) instead of 'grep' for better performance and features"],
      ['Bash', 'hook.PreToolUse', "• Use 'rg --files -g pattern' instead of 'find -name' for better performance"],
      ['Write', 'hook.PreToolUse', expect.stringMatching(/exited with code 2/)],
      ['Edit', 'hook.PreToolUse', expect.stringMatching(/exited with code 2/)],
    ]);
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['src/b.txt']);
  });

  it("PostToolUse gets each tool's own tool_response, the tool_use_id and permission_mode", async () => {
    const log = path.join(tempDir('corral-cc-log-'), 'post.jsonl');
    const { report, run } = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'PostToolUse', command: `cat >> '${log}'` }]), 'src/a.txt': 'one\n' },
      'task: t\nallow: ["src/**"]\nsandbox: none\n',
      [
        '  - tools:',
        '      - Bash: {command: "echo out; echo err >&2"}',
        '      - Write: {file_path: src/b.txt, content: "two\\n"}',
        '      - Edit: {file_path: src/a.txt, old_string: one, new_string: uno}',
        '      - Read: {file_path: src/a.txt}',
        '  - text: Done.',
      ],
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const worktree = trace(report.trace).find((e) => e.type === 'worktree')!.dir as string;
    const payloads = readFileSync(log, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const calls = trace(report.trace).filter((e) => e.type === 'tool_call');
    expect(payloads.map((p) => p.tool_use_id)).toEqual(calls.map((c) => c.id));
    for (const payload of payloads) expect(payload).toMatchObject({ hook_event_name: 'PostToolUse', permission_mode: 'dontAsk', cwd: worktree });
    expect(payloads[0].tool_response).toEqual({ stdout: 'out\n', stderr: 'err\n', interrupted: false, isImage: false });
    expect(payloads[1].tool_input).toEqual({ file_path: path.join(worktree, 'src/b.txt'), content: 'two\n' });
    expect(payloads[1].tool_response).toEqual({ type: 'create', filePath: path.join(worktree, 'src/b.txt'), content: 'two\n', structuredPatch: [], originalFile: null });
    expect(payloads[2].tool_response).toMatchObject({ filePath: path.join(worktree, 'src/a.txt'), oldString: 'one', newString: 'uno', originalFile: 'one\n', userModified: false, replaceAll: false });
    expect(payloads[3].tool_response).toEqual({ type: 'text', file: { filePath: path.join(worktree, 'src/a.txt'), content: 'uno', numLines: 1, startLine: 1, totalLines: 1 } });
  });

  it('updatedInput runs once judged again: a rewrite inside the rules runs, a rewrite never turns a deny into an allow, nor loosens the guard', async () => {
    // Rewrites every Bash command to write "rewritten" into src/out.txt, and every Write to land outside the worktree.
    const rewrite = [
      'input=$(cat); tool=$(jq -r .tool_name <<<"$input")',
      'if [ "$tool" = Bash ]; then jq -c \'{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: {command: "echo rewritten > src/out.txt"}}}\' <<<"$input"',
      'else jq -c \'{hookSpecificOutput: {hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: (.tool_input + {file_path: "/tmp/corral-rewritten-outside.txt"})}}\' <<<"$input"; fi',
    ].join('\n');
    const { report, run, events } = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'PreToolUse', command: rewrite }]), 'src/.keep': '' },
      'task: t\nallow: ["src/**"]\nsandbox: none\npolicy: {deny: ["Bash(curl *)"]}\n',
      [
        '  - tools:',
        '      - Bash: {command: "echo original > src/out.txt"}',
        '      - Bash: {command: "curl https://example.invalid"}',
        '      - Write: {file_path: src/w.txt, content: "w\\n"}',
        '  - text: Done.',
      ],
    );
    expect(run.exitCode, run.stderr).toBe(0);
    const patch = readFileSync(report.patch, 'utf8');
    expect(patch).toContain('+rewritten');
    expect(patch).not.toContain('original');
    // The curl call stays denied by the policy though its rewrite is harmless; the Write's rewrite leaves the worktree and is denied.
    expect(report.denied.map((d: any) => [d.tool, d.scope])).toEqual([
      ['Bash', 'ticket'],
      ['Write', 'baseline'],
    ]);
    expect(report.changes.map((c: any) => c.change.path)).toEqual(['src/out.txt']);
    const hooks = events.filter((e) => e.type === 'hook');
    expect(hooks[0]!.updatedInput).toEqual({ command: 'echo rewritten > src/out.txt' });
    expect(events.find((e) => e.type === 'tool_call')!.input).toEqual({ command: 'echo original > src/out.txt' });
  });

  it('an updatedInput that is not a valid call is refused', async () => {
    const { report } = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'PreToolUse', command: `cat >/dev/null; echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"cmd":"ls"}}}'` }]), 'src/.keep': '' },
      'task: t\nallow: ["src/**"]\nsandbox: none\nallow_empty: true\n',
      ['  - tools:', '      - Bash: {command: "touch src/x"}', '  - text: Done.'],
    );
    expect(report.denied).toMatchObject([{ tool: 'Bash', rule: 'hook.PreToolUse', reason: expect.stringMatching(/updatedInput is not a valid Bash call/) }]);
    expect(report.changes).toEqual([]);
  });

  it('continue: false ends the run as blocked (exit 4) with its stopReason, from PreToolUse and from Stop', async () => {
    const halt = `cat >/dev/null; echo '{"continue": false, "stopReason": "release freeze: no changes today"}'`;
    const pre = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'PreToolUse', matcher: 'Write', command: halt }]), 'src/.keep': '' },
      'task: t\nallow: ["src/**"]\nsandbox: none\n',
      ['  - tools:', '      - Bash: {command: "echo ok"}', '      - Write: {file_path: src/a.txt, content: "a\\n"}', '      - Bash: {command: "touch src/never"}', '  - text: Done.'],
    );
    expect(pre.run.exitCode).toBe(4);
    expect(pre.report.status).toBe('blocked');
    expect(pre.report.reason).toContain('release freeze: no changes today');
    expect(pre.report.changes).toEqual([]);
    expect(pre.events.filter((e) => e.type === 'tool_call')).toHaveLength(2);
    expect(pre.events.find((e) => e.type === 'hook')).toMatchObject({ stopReason: 'release freeze: no changes today' });

    const stop = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'Stop', command: halt }]), 'src/.keep': '' },
      'task: t\nallow: ["src/**"]\nsandbox: none\nchecks: ["false"]\n',
      ['  - tools:', '      - Write: {file_path: src/a.txt, content: "a\\n"}', '  - text: Done.'],
    );
    expect(stop.run.exitCode).toBe(4);
    expect(stop.report.reason).toContain('release freeze');
    // The checks never ran.
    expect(stop.events.filter((e) => e.type === 'check')).toEqual([]);
  });

  it("a Stop hook's additionalContext keeps the agent going, as Claude Code's does", async () => {
    const once = path.join(tempDir('corral-cc-stop-'), 'asked');
    const stopHook = `cat >/dev/null; if [ ! -e '${once}' ]; then touch '${once}'; echo '{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"also add a line to CHANGES.md"}}'; fi`;
    const { report, run, events } = await runTicket(
      { 'corral.yaml': hooksYaml([{ event: 'Stop', command: stopHook }]), 'src/.keep': '' },
      'task: t\nallow: ["src/**", "CHANGES.md"]\nsandbox: none\n',
      [
        '  - tools:',
        '      - Write: {file_path: src/a.txt, content: "a\\n"}',
        '  - text: Done.',
        '  - tools:',
        '      - Write: {file_path: CHANGES.md, content: "- added a\\n"}',
        '  - text: Done, with the changelog.',
      ],
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(report.changes.map((c: any) => c.change.path).sort()).toEqual(['CHANGES.md', 'src/a.txt']);
    expect(events.filter((e) => e.type === 'hook' && e.event === 'Stop').map((e) => e.additionalContext)).toEqual(['also add a line to CHANGES.md', undefined]);
  });

  it('a hook gets the host variables it names in env_from_host; the agent never sees them, nor does the trace', async () => {
    const token = 'ghp_fake0123456789abcdefghijklmnopqrstuv';
    const log = path.join(tempDir('corral-cc-log-'), 'hook-env.txt');
    const { report, run, events } = await runTicket(
      {
        'corral.yaml': hooksYaml([{ event: 'PreToolUse', matcher: 'Bash', command: `echo "hook sees [$HOOK_GH]" > '${log}'; echo "token $HOOK_GH" >&2`, extra: 'env_from_host: [HOOK_GH]' }]),
        'src/.keep': '',
      },
      'task: t\nallow: ["src/**"]\nsandbox: none\n',
      ['  - tools:', '      - Bash: {command: "echo \\"[$HOOK_GH]\\" > src/agent.txt"}', '  - text: Done.'],
      { HOOK_GH: token },
    );
    expect(run.exitCode, run.stderr).toBe(0);
    expect(readFileSync(log, 'utf8').trim()).toBe(`hook sees [${token}]`);
    expect(readFileSync(report.patch, 'utf8')).toContain('+[]');
    expect(readFileSync(report.trace, 'utf8')).not.toContain(token);
    expect(events.find((e) => e.type === 'hook')!.stderr).toContain('[REDACTED');
  });
});

describe('additionalContext through the Messages API', () => {
  it('reaches the model with the tool result, from PreToolUse and PostToolUse', async () => {
    server = await startMessagesServer([
      { content: [{ type: 'tool_use', id: 'toolu_ctx', name: 'Write', input: { file_path: 'src/a.txt', content: 'a\n' } }] },
      { content: [{ type: 'text', text: 'Done.' }] },
    ]);
    const repo = repoWithFiles(
      {
        'corral.yaml': hooksYaml([
          { event: 'PreToolUse', command: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"the style guide says: tabs"}}'` },
          { event: 'PostToolUse', command: `cat >/dev/null; echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"formatter ran clean"}}'` },
        ]),
        'src/.keep': '',
        'ticket.yaml': 'task: t\nallow: ["src/**"]\nsandbox: none\nmodel: claude-sonnet-4-6\n',
      },
      'corral-cc-ctx-',
    );
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'sk-ant-test-0123456789abcdefghijklmnop', ANTHROPIC_BASE_URL: server.url } });
    expect(run.exitCode, run.stderr).toBe(0);
    const second = server.requests[1]!.body as any;
    const result = second.messages.at(-1).content.find((block: any) => block.type === 'tool_result');
    const text = JSON.stringify(result.content);
    expect(text).toContain('[PreToolUse hook context] the style guide says: tabs');
    expect(text).toContain('[PostToolUse hook context] formatter ran clean');
  });
});
