import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { extraWorktrees, repoWithFiles, tempDir } from '../support/repo.js';

function repoWith(files: Record<string, string>): string {
  return repoWithFiles(files, 'corral-config-e2e-');
}

/** A user config home holding `config.yaml`. */
function userConfig(text: string): string {
  const home = tempDir('corral-xdg-');
  mkdirSync(path.join(home, 'corral'));
  writeFileSync(path.join(home, 'corral', 'config.yaml'), text);
  return home;
}

const REPLAY = 'turns:\n  - tools:\n      - Write: {file_path: src/a.txt, content: "changed\\n"}\n  - tools:\n      - Bash: {command: "ls"}\n  - text: Done.\n';

describe('corral config', () => {
  it('prints every effective value and rule with the scope, file and line it came from', async () => {
    const repo = repoWith({ 'corral.yaml': 'models:\n  fast: claude-haiku-4-5\nbudget:\n  minutes: 12\npolicy:\n  allow:\n    - Bash(make deploy:*)\n' });
    const xdg = userConfig('model: fast\nbudget:\n  minutes: 5\n  steps: 9\npolicy:\n  deny:\n    - Bash(make deploy:*)\n');
    const run = await runCli(['config'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain(`user     ${path.join(xdg, 'corral', 'config.yaml')}`);
    expect(run.stdout).toContain(`project  ${path.join(repo, 'corral.yaml')}`);
    expect(run.stdout).toMatch(/model +claude-haiku-4-5 \(alias fast, user .*config\.yaml:1\) +← project corral\.yaml:2/);
    expect(run.stdout).toMatch(/budget\.minutes +12 +← project corral\.yaml:4/);
    expect(run.stdout).toMatch(/budget\.steps +9 +← user .*config\.yaml:4/);
    expect(run.stdout).toMatch(/budget\.tokens +2000000 +← default/);
    expect(run.stdout).toMatch(/model_api\.max_retries +2 +← default \(the SDK's\)/);
    expect(run.stdout).toMatch(/deny +Bash\(make deploy:\*\) +← user .*config\.yaml:7/);
    expect(run.stdout).toMatch(/allow Bash\(make deploy:\*\) +← project corral\.yaml:7/);

    const json = JSON.parse((await runCli(['config', '--json'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } })).stdout);
    expect(json.values['budget.minutes']).toEqual({ value: 12, from: 'project corral.yaml:4' });
    expect(json.policy.defaultEffect).toEqual({ value: 'ask', from: 'default' });

    // A deny in the user scope beats the project's allow, and explain names file and scope.
    const explain = await runCli(['explain', 'make deploy prod'], { cwd: repo, env: { XDG_CONFIG_HOME: xdg } });
    expect(explain.stdout.split('\n')[0]).toMatch(/^deny {2}Bash\(make deploy:\*\) \(user, .*config\.yaml:7\)$/);
  });

  it('shows what a ticket gets: its own fields over the config', async () => {
    const repo = repoWith({ 'corral.yaml': 'budget:\n  minutes: 12\n', 't.yaml': 'task: t\nallow: ["src/**"]\nbudget: {minutes: 3}\nsandbox: none\n' });
    const run = await runCli(['config', '--ticket', 't.yaml'], { cwd: repo });
    expect(run.stdout).toMatch(/budget\.minutes +3 +← ticket t\.yaml/);
    expect(run.stdout).toMatch(/sandbox +none +← ticket t\.yaml/);
  });
});

describe('config applied to runs', () => {
  it('runs a ticket whose model is an alias, with budget defaults from config', async () => {
    const repo = repoWith({
      'corral.yaml': 'models:\n  demo: replay:replay/three-steps.yaml\nbudget:\n  steps: 2\n',
      'replay/three-steps.yaml': REPLAY,
      't.yaml': 'task: t\nallow: ["src/**"]\nmodel: demo\n',
      'src/a.txt': 'a\n',
    });
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(report.model).toBe(`replay:${path.join(repo, 'replay/three-steps.yaml')}`);
    // Three turns do not fit the config's budget of two steps.
    expect(run.exitCode).toBe(3);
    expect(report.budgetExhausted).toBe('steps');
  });

  it('refuses to run with a broken config: exit 64, every problem at file:line:column, nothing run', async () => {
    const repo = repoWith({ 'corral.yaml': 'budget:\n  stepz: 2\npolicy:\n  deny: ["Bash(git push"]\n', 't.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:r.yaml\n', 'r.yaml': REPLAY });
    const run = await runCli(['run', 't.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('corral.yaml:2:3: budget.stepz: unknown field (did you mean `steps`?)');
    expect(run.stderr).toMatch(/corral\.yaml:4:\d+: policy\.deny\.0:/);
    expect(extraWorktrees(repo)).toEqual([]);
    const check = await runCli(['check', 't.yaml'], { cwd: repo });
    expect(check.exitCode).toBe(64);
    expect(check.stderr).toContain('corral.yaml: 2 problems');
  });

  it('names an unknown alias as a problem of the ticket', async () => {
    const repo = repoWith({ 't.yaml': 'task: t\nallow: ["src/**"]\nmodel: fast\n' });
    const run = await runCli(['check', 't.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('model: `fast` is not a model id, and no config defines it as an alias');
  });

  it('a run.start deny ends the run before any worktree exists (exit 4), naming the rule and its line', async () => {
    const repo = repoWith({
      'corral.yaml': 'policy:\n  rules:\n    - id: no-release\n      hook: run.start\n      when: \'"release" in ticket.labels\'\n      effect: deny\n      reason: release tickets are done by a person\n',
      't.yaml': 'task: t\nallow: ["src/**"]\nlabels: [release]\nmodel: replay:r.yaml\nsetup: ["touch /tmp/never-$$"]\n',
      'ok.yaml': 'task: t\nallow: ["src/**"]\nlabels: [dev]\nmodel: replay:r.yaml\n',
      'r.yaml': REPLAY,
      'src/a.txt': 'a\n',
    });
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(4);
    const report = runReport(run.stdout);
    expect(report.status).toBe('blocked');
    expect(report.reason).toBe('the run was denied by run.start rule no-release (corral.yaml:3): release tickets are done by a person');
    expect(report.steps).toBe(0);
    expect(report.baseCommit).toBeTypeOf('string');
    expect(report.patch).toBeNull();
    const trace = readFileSync(report.trace, 'utf8');
    expect(trace).toContain('"type":"run_gate"');
    expect(trace).not.toContain('"type":"worktree"');
    expect(extraWorktrees(repo)).toEqual([]);

    const allowed = await runCli(['run', 'ok.yaml', '--json'], { cwd: repo });
    expect(runReport(allowed.stdout).status).toBe('passed');
  });
});

describe('corral init', () => {
  it('writes a commented corral.yaml and an example ticket that check clean, and never overwrites', async () => {
    const repo = repoWith({ 'README.md': 'x\n' });
    const run = await runCli(['init'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('wrote corral.yaml');
    expect(run.stdout).toContain('wrote tickets/example.yaml');
    // corral is no dependency of this repository: a path to whichever copy ran init would
    // be one machine's path in a committed file.
    const config = readFileSync(path.join(repo, 'corral.yaml'), 'utf8');
    expect(config.split('\n')[0]).toContain('No $schema line');
    expect(config).not.toContain('$schema=');
    expect(readFileSync(path.join(repo, 'tickets/example.yaml'), 'utf8')).not.toContain('$schema=');

    expect((await runCli(['check', 'tickets/'], { cwd: repo, env: { ANTHROPIC_API_KEY: undefined } })).exitCode).toBe(0);
    const effective = await runCli(['config'], { cwd: repo });
    expect(effective.stdout).toMatch(/model +claude-sonnet-4-6 \(alias strong, project corral\.yaml:\d+\)/);

    writeFileSync(path.join(repo, 'corral.yaml'), 'mine\n');
    const again = await runCli(['init'], { cwd: repo });
    expect(again.exitCode).toBe(64);
    expect(again.stderr).toContain('corral.yaml already exists');
    expect(readFileSync(path.join(repo, 'corral.yaml'), 'utf8')).toBe('mine\n');
  });

  it('points $schema into node_modules/corral when the repository depends on corral', async () => {
    const repo = repoWith({ 'package.json': JSON.stringify({ name: 'team-app', private: true, devDependencies: { corral: '0.1.0' } }) });
    const run = await runCli(['init'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    // Relative to each file, so the line is the same on every clone after `npm ci`.
    expect(readFileSync(path.join(repo, 'corral.yaml'), 'utf8').split('\n')[0]).toBe('# yaml-language-server: $schema=node_modules/corral/schema/config.schema.json');
    expect(readFileSync(path.join(repo, 'tickets/example.yaml'), 'utf8').split('\n')[0]).toBe('# yaml-language-server: $schema=../node_modules/corral/schema/ticket.schema.json');
  });

  it('refuses outside a git repository', async () => {
    const dir = tempDir('corral-no-git-');
    const run = await runCli(['init'], { cwd: dir });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('is not in a git repository');
  });
});
