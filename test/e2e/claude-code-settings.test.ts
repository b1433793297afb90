import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// A repository moved over from Claude Code keeps its .claude/settings.json: its rules
// apply in `corral run`, `policy test` and `explain` with Claude Code's meaning.

const PROJECT_SETTINGS = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": [
      "Bash(npm run test:*)",
      "WebFetch(domain:docs.example.com)"
    ],
    "deny": [
      "Edit(/src/secret/**)",
      "mcp__github__create_issue"
    ],
    "defaultMode": "acceptEdits"
  },
  "model": "opus",
  "statusLine": {"type": "command", "command": "echo hi"},
  "enabledPlugins": {"x@y": true},
  "hooks": {
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo start"}]}],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "true"}]}]
  }
}
`;

function claudeRepo(files: Record<string, string> = {}): string {
  return repoWithFiles({ '.claude/settings.json': PROJECT_SETTINGS, 'src/secret/x.txt': 'secret\n', 'src/app.txt': 'app\n', ...files }, 'corral-claude-code-');
}

/** A home whose ~/.claude/settings.json is `text`. */
function homeWith(text: string): string {
  const home = tempDir('corral-claude-home-');
  mkdirSync(path.join(home, '.claude'));
  writeFileSync(path.join(home, '.claude', 'settings.json'), text);
  return home;
}

const emptyHome = (): string => tempDir('corral-claude-home-');

describe("Claude Code's settings as scopes", () => {
  it('explain applies a project rule with Claude Code meaning: /x is the project root, and names file:line', async () => {
    const repo = claudeRepo();
    const env = { HOME: emptyHome() };
    const edit = await runCli(['explain', '--tool', 'Edit', 'src/secret/x.txt'], { cwd: repo, env });
    expect(edit.exitCode).toBe(0);
    expect(edit.stdout.split('\n')[0]).toBe('deny  Edit(/src/secret/**) (project, .claude/settings.json:9)');
    const other = await runCli(['explain', '--tool', 'Edit', 'src/app.txt'], { cwd: repo, env });
    expect(other.stdout.split('\n')[0]).not.toContain('Edit(/src/secret/**)');
    for (const command of ['npm run test', 'npm run test -- --watch']) {
      const bash = await runCli(['explain', command], { cwd: repo, env });
      expect(bash.stdout.split('\n')[0]).toBe('allow  Bash(npm run test:*) (project, .claude/settings.json:5)');
    }
    const build = await runCli(['explain', 'npm run build'], { cwd: repo, env });
    expect(build.stdout.split('\n')[0]).not.toContain('npm run test');
  });

  it('corral config lists the files, each rule and hook with its line, and what it ignores, without failing on keys it lacks', async () => {
    const repo = claudeRepo();
    const run = await runCli(['config'], { cwd: repo, env: { HOME: emptyHome() } });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toMatch(/claude project +.*\.claude\/settings\.json\n/);
    expect(run.stdout).toMatch(/deny +Edit\(\/src\/secret\/\*\*\) +← project \.claude\/settings\.json:9/);
    expect(run.stdout).toMatch(/allow Bash\(npm run test:\*\) +← project \.claude\/settings\.json:5/);
    expect(run.stdout).toMatch(/PreToolUse \[Bash\] true \(timeout 60s\) +← project \.claude\/settings\.json:19/);
    for (const ignored of ['model', 'statusLine', 'enabledPlugins', 'hooks.SessionStart', 'permissions.defaultMode']) expect(run.stdout).toContain(`  ${ignored}  ← .claude/settings.json`);
  });

  it('policy test judges with the settings rules', async () => {
    const repo = claudeRepo({
      'cases.yaml': [
        'cases:',
        '  - id: secret-edit',
        '    tool: Edit',
        '    args: {file_path: src/secret/x.txt, old_string: a, new_string: b}',
        '    expect: deny',
        '    rule: Edit(/src/secret/**)',
        '  - id: tests-run',
        '    tool: Bash',
        '    args: {command: npm run test -- --watch}',
        '    expect: allow',
        '    rule: Bash(npm run test:*)',
        '',
      ].join('\n'),
    });
    const run = await runCli(['policy', 'test', 'cases.yaml', '--sandbox', 'none'], { cwd: repo, env: { HOME: emptyHome() } });
    expect(run.stdout.trim().split('\n').at(-1)).toBe('2 passed, 0 failed');
    expect(run.exitCode).toBe(0);
  });

  it('corral run denies the edit the settings deny, naming the rule and its line', async () => {
    const repo = claudeRepo({
      'r.yaml': 'turns:\n  - tools:\n      - Edit: {file_path: src/secret/x.txt, old_string: secret, new_string: leaked}\n  - tools:\n      - Write: {file_path: src/app.txt, content: "changed\\n"}\n  - text: Done.\n',
      't.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:r.yaml\nsandbox: none\n',
    });
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: repo, env: { HOME: emptyHome() } });
    const report = runReport(run.stdout);
    expect(report.denied.map((d: { rule: string }) => d.rule)).toEqual(['Edit(/src/secret/**)']);
    expect(report.denied[0].source ?? JSON.stringify(report.denied[0])).toContain('.claude/settings.json:9');
  });

  it('corral run runs a PreToolUse hook from the settings, which blocks the call it exits 2 on', async () => {
    const repo = claudeRepo({
      '.claude/settings.json': JSON.stringify(
        { permissions: { deny: ['Edit(/src/secret/**)'] }, hooks: { PreToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: "grep -q '/src/blocked.txt\"' && { echo 'blocked.txt is off limits' >&2; exit 2; }; exit 0" }] }] } },
        null,
        2,
      ),
      'r.yaml': 'turns:\n  - tools:\n      - Write: {file_path: src/blocked.txt, content: "x\\n"}\n  - tools:\n      - Write: {file_path: src/app.txt, content: "changed\\n"}\n  - text: Done.\n',
      't.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:r.yaml\nsandbox: none\n',
    });
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: repo, env: { HOME: emptyHome() } });
    const report = runReport(run.stdout);
    expect(report.denied.map((d: { rule: string; reason: string }) => [d.rule, d.reason])).toEqual([['hook.PreToolUse', 'blocked.txt is off limits']]);
    expect(report.changes.map((c: { change: { path: string } }) => c.change.path)).toEqual(['src/app.txt']);
  });

  it('gives tools the settings env, a secret-named one only when the ticket passes it', async () => {
    const files = (ticketEnv: string) => ({
      '.claude/settings.json': '{"env": {"GREETING": "hello", "MY_TOKEN": "tok_0123456789abcdef"}}\n',
      'r.yaml': 'turns:\n  - tools:\n      - Bash: {command: \'printf "%s|%s" "$GREETING" "${MY_TOKEN:-none}" > src/env.txt\'}\n  - text: Done.\n',
      't.yaml': `task: t\nallow: ["src/**"]\nmodel: replay:r.yaml\nsandbox: none\n${ticketEnv}`,
    });
    const withheld = claudeRepo(files(''));
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: withheld, env: { HOME: emptyHome() } });
    const report = runReport(run.stdout);
    expect(readFileSync(report.patch, 'utf8')).toContain('+hello|none');
    expect(run.stderr + JSON.stringify(report)).toContain('env MY_TOKEN (project .claude/settings.json:1) looks like a secret');
    const passed = claudeRepo(files('env: [MY_TOKEN]\n'));
    const second = runReport((await runCli(['run', 't.yaml', '--json'], { cwd: passed, env: { HOME: emptyHome() } })).stdout);
    const patch = readFileSync(second.patch, 'utf8');
    // The tool got the value; the kept patch and the trace show it redacted.
    expect(patch).toContain('+hello|');
    expect(patch).not.toContain('hello|none');
    expect(patch).not.toContain('tok_0123456789abcdef');
    expect(readFileSync(second.trace, 'utf8')).not.toContain('tok_0123456789abcdef');
  });

  it('lets the additionalDirectories be read, naming the line that added them', async () => {
    const shared = tempDir('corral-claude-shared-');
    writeFileSync(path.join(shared, 'notes.txt'), 'n\n');
    const repo = claudeRepo({ '.claude/settings.json': `{\n  "permissions": {\n    "additionalDirectories": [\n      ${JSON.stringify(shared)}\n    ]\n  }\n}\n` });
    const env = { HOME: emptyHome() };
    const read = await runCli(['explain', '--tool', 'Read', path.join(shared, 'notes.txt')], { cwd: repo, env });
    expect(read.stdout.split('\n')[0]).toBe(`allow  Read(/${shared}/**) (project, .claude/settings.json:4)`);
    const write = await runCli(['explain', '--tool', 'Write', path.join(shared, 'notes.txt')], { cwd: repo, env });
    expect(write.stdout.split('\n')[0]).toMatch(/^deny  baseline\.write-outside/);
  });

  it('reads the user scope from HOME, where /x is in ~/.claude, and stacks local over project over user', async () => {
    const home = homeWith('{\n  "permissions": {\n    "deny": [\n      "Read(/notes/**)"\n    ]\n  },\n  "env": {"WHO": "user", "ONLY_USER": "u"}\n}\n');
    mkdirSync(path.join(home, '.claude', 'notes'));
    writeFileSync(path.join(home, '.claude', 'notes', 'n.txt'), 'n\n');
    const repo = claudeRepo({
      '.claude/settings.json': '{"env": {"WHO": "project", "ONLY_PROJECT": "p"}}\n',
      '.claude/settings.local.json': '{\n  "env": {\n    "WHO": "local"\n  },\n  "permissions": {"ask": ["Bash(make:*)"]}\n}\n',
      'notes/n.txt': 'not the home one\n',
    });
    const env = { HOME: home, CLAUDE_CONFIG_DIR: undefined };
    const inHome = await runCli(['explain', '--tool', 'Read', path.join(home, '.claude', 'notes', 'n.txt')], { cwd: repo, env });
    expect(inHome.stdout.split('\n')[0]).toBe('deny  Read(/notes/**) (user, ~/.claude/settings.json:4)');
    const inRepo = await runCli(['explain', '--tool', 'Read', 'notes/n.txt'], { cwd: repo, env });
    expect(inRepo.stdout.split('\n')[0]).not.toContain('Read(/notes/**)');
    const make = await runCli(['explain', 'make all'], { cwd: repo, env });
    expect(make.stdout.split('\n')[0]).toBe('ask  Bash(make:*) (project, .claude/settings.local.json:5)');

    const config = await runCli(['config', '--json'], { cwd: repo, env });
    const values = JSON.parse(config.stdout).values;
    expect(values['env.WHO']).toEqual({ value: 'local', from: 'project .claude/settings.local.json:3' });
    expect(values['env.ONLY_PROJECT']).toEqual({ value: 'p', from: 'project .claude/settings.json:1' });
    expect(values['env.ONLY_USER']).toEqual({ value: 'u', from: 'user ~/.claude/settings.json:7' });
  });

  it('claude_code: {settings: false} turns the files off', async () => {
    const repo = claudeRepo({ 'corral.yaml': 'claude_code:\n  settings: false\n', '.claude/settings.local.json': '{"permissions": {"deny": ["Bahs(rm:*)"]}}\n' });
    const edit = await runCli(['explain', '--tool', 'Edit', 'src/secret/x.txt'], { cwd: repo, env: { HOME: emptyHome() } });
    expect(edit.exitCode).toBe(0);
    expect(edit.stdout).not.toContain('Edit(/src/secret/**)');
    const config = await runCli(['config'], { cwd: repo, env: { HOME: emptyHome() } });
    expect(config.stdout).toMatch(/claude_code\.settings +false +← project corral\.yaml:2/);
    expect(config.stdout).not.toContain('claude project');
  });
});

describe('no silent no-ops: a rule naming an unknown tool', () => {
  it('is an error with a did-you-mean in Claude Code settings: exit 64 with file, line and field', async () => {
    const repo = claudeRepo({ '.claude/settings.local.json': '{\n  "permissions": {\n    "deny": [\n      "Bahs(rm:*)",\n      "bash(ls)",\n      "Frob(x)"\n    ]\n  }\n}\n' });
    for (const args of [['config'], ['explain', 'ls']]) {
      const run = await runCli(args, { cwd: repo, env: { HOME: emptyHome() } });
      expect(run.exitCode).toBe(64);
      expect(run.stderr).toMatch(/\.claude\/settings\.local\.json:4:\d+: permissions\.deny\.0: `Bahs` is not a tool.*did you mean `Bash`/);
      expect(run.stderr).toMatch(/\.claude\/settings\.local\.json:5:\d+: permissions\.deny\.1: `bash` is not a tool.*did you mean `Bash`/);
      expect(run.stderr).toMatch(/\.claude\/settings\.local\.json:6:\d+: permissions\.deny\.2: `Frob` is not a tool/);
    }
    writeFileSync(path.join(repo, 'r.yaml'), 'turns:\n  - text: Done.\n');
    writeFileSync(path.join(repo, 't.yaml'), 'task: t\nallow: ["src/**"]\nmodel: replay:r.yaml\n');
    writeFileSync(path.join(repo, 'cases.yaml'), 'cases:\n  - id: a\n    tool: Bash\n    args: {command: ls}\n    expect: allow\n');
    for (const args of [['run', 't.yaml'], ['policy', 'test', 'cases.yaml']]) {
      const run = await runCli(args, { cwd: repo, env: { HOME: emptyHome() } });
      expect(run.exitCode, args.join(' ')).toBe(64);
      expect(run.stderr).toMatch(/settings\.local\.json:4:\d+: permissions\.deny\.0: `Bahs` is not a tool.*did you mean `Bash`/);
    }
  });

  it('is an error in corral.yaml and in a ticket, while mcp__ names are kept', async () => {
    const repo = repoWithFiles({
      'corral.yaml': 'policy:\n  allow:\n    - mcp__github__create_issue\n    - mcp__my-server__*\n  deny:\n    - Raed(.env)\n',
      't.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:r.yaml\npolicy:\n  ask: ["edit(src/**)"]\n',
      'r.yaml': 'turns:\n  - text: Done.\n',
    });
    const config = await runCli(['config'], { cwd: repo, env: { HOME: emptyHome() } });
    expect(config.exitCode).toBe(64);
    expect(config.stderr).toMatch(/corral\.yaml:6:\d+: policy\.deny\.0: `Raed` is not a tool.*did you mean `Read`/);
    expect(config.stderr).not.toContain('mcp__');
    writeFileSync(path.join(repo, 'corral.yaml'), 'policy:\n  allow:\n    - mcp__github__create_issue\n');
    const run = await runCli(['run', 't.yaml'], { cwd: repo, env: { HOME: emptyHome() } });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/t\.yaml:5:\d+: policy\.ask\.0: `edit` is not a tool.*did you mean `Edit`/);
  });
});
