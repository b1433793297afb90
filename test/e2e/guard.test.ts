import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { commitFiles, makeDemoRepo } from '../support/repo.js';

function demoWithPolicyTests(): string {
  const repo = makeDemoRepo();
  copyFileSync(path.join(PROJECT_ROOT, 'policy_tests.yaml'), path.join(repo, 'policy_tests.yaml'));
  return repo;
}

describe('corral policy test', () => {
  it('runs policy_tests.yaml by default: a line per case with the deciding rule, then the totals', async () => {
    const repo = demoWithPolicyTests();
    const run = await runCli(['policy', 'test'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('ok    git-push-through-git-C  deny  baseline.git-owned (baseline)');
    expect(run.stdout).toContain('ok    runs-the-ticket-check  allow  ticket.checks (ticket)');
    expect(run.stdout.trim().split('\n').at(-1)).toBe('9 passed, 0 failed');
  });

  it('exits 1 and says got versus expected when a decision differs', async () => {
    const repo = demoWithPolicyTests();
    writeFileSync(
      path.join(repo, 'wrong.yaml'),
      [
        'ticket: tickets/fix-days-overdue.yaml',
        'cases:',
        '  - id: still-fine',
        '    tool: Bash',
        '    args: {command: git status}',
        '    expect: allow',
        '  - id: thinks-push-is-fine',
        '    tool: Bash',
        '    args: {command: git push}',
        '    expect: allow',
        '  - id: right-effect-wrong-rule',
        '    tool: Read',
        '    args: {file_path: fixtures/example-project/.env}',
        '    expect: deny',
        '    rule: fence.forbidden',
        '',
      ].join('\n'),
    );
    const run = await runCli(['policy', 'test', 'wrong.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('ok    still-fine');
    expect(run.stdout).toMatch(/FAIL {2}thinks-push-is-fine {2}\(wrong\.yaml:7\) {2}got deny {2}baseline\.git-owned \(baseline\), expected allow/);
    expect(run.stdout).toMatch(/FAIL {2}right-effect-wrong-rule .*got deny {2}baseline\.secrets \(baseline\), expected deny by fence\.forbidden/);
    expect(run.stdout.trim().split('\n').at(-1)).toBe('1 passed, 2 failed');
  });

  it('exits 64 on a malformed file, naming line, column and field', async () => {
    const repo = demoWithPolicyTests();
    writeFileSync(path.join(repo, 'bad.yaml'), 'cases:\n  - id: a\n    tool: Bash\n    args: {command: ls}\n    expct: allow\n');
    const run = await runCli(['policy', 'test', 'bad.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('bad.yaml:5:5: cases.0.expct: unknown field (did you mean `expect`?)');
    const missing = await runCli(['policy', 'test', 'nope.yaml'], { cwd: repo });
    expect(missing.exitCode).toBe(64);
    expect(missing.stderr).toContain('nope.yaml:1:1');
  });
});

describe('corral explain', () => {
  it('shows the decision with the parsed commands, the resolved paths and the rule', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['explain', '--ticket', 'tickets/cap-fine.yaml', 'cd fixtures && timeout 5 bash -c "cat example-project/.e?v" > /dev/null'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines[0]).toBe('deny  baseline.secrets (baseline)');
    expect(run.stdout).toContain(`${repo}/fixtures$ cat "example-project/.e?v"  (via timeout > bash -c)`);
    expect(run.stdout).toMatch(new RegExp(`read +${repo}/fixtures/example-project/\\.env <- cat argument .*secret.*glob`));
  });

  it('prints JSON, and takes other tools by their main field', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['explain', '--json', '--tool', 'Write', '--ticket', 'tickets/cap-fine.yaml', 'fixtures/example-project/package.json'], { cwd: repo });
    const verdict = JSON.parse(run.stdout);
    expect(verdict.decision).toMatchObject({ effect: 'deny', rule: 'fence.forbidden', scope: 'ticket' });
    expect(verdict.paths[0]).toMatchObject({ access: 'write', inside: true, path: `${repo}/fixtures/example-project/package.json` });
  });
});

describe('the guard in a run', () => {
  it('decides every call by the ticket rules and records commands, paths, rule and scope in the trace', async () => {
    const repo = makeDemoRepo();
    commitFiles(repo, {
      'fixtures/replay/ruled.yaml': [
        'turns:',
        '  - tools:',
        '      - Bash: {command: "cd fixtures && git -C .. status --short"}',
        '      - Bash: {command: "npm view left-pad version"}',
        '      - Bash: {command: "ls fixtures/example-project | wc -l"}',
        '      - Read: {file_path: fixtures/example-project/src/fees.js}',
        '  - text: done',
        '',
      ].join('\n'),
      'fixtures/tickets/ruled.yaml': [
        'task: t',
        'allow: ["fixtures/example-project/src/**"]',
        'allow_empty: true',
        'policy:',
        '  deny: ["Bash(git status:*)"]',
        '  rules:',
        '    - id: no-npm-registry',
        '      when: commands.exists(c, c.name == "npm" && c.argv.exists(a, a == "view"))',
        '      effect: deny',
        '      reason: the registry is off limits for this ticket',
        'model: replay:../replay/ruled.yaml',
        '',
      ].join('\n'),
    });
    const run = await runCli(['run', 'fixtures/tickets/ruled.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(report.denied.map((d: { rule: string }) => d.rule)).toEqual(['Bash(git status:*)', 'no-npm-registry']);
    expect(report.status).toBe('passed');
    const decisions = readFileSync(report.trace, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.type === 'decision');
    expect(decisions.map((d: { effect: string }) => d.effect)).toEqual(['deny', 'deny', 'allow', 'allow']);
    expect(decisions[0]).toMatchObject({ rule: 'Bash(git status:*)', scope: 'ticket', commands: [['cd', 'fixtures'], ['git', '-C', '..', 'status', '--short'], ['git', 'status', '--short']] });
    expect(decisions[1]).toMatchObject({ rule: 'no-npm-registry', reason: 'the registry is off limits for this ticket' });
    expect(decisions[2]).toMatchObject({ rule: 'baseline.read-only', scope: 'baseline' });
    expect(decisions[2].paths).toContain(`list ${decisions[2].paths[0].slice(5)}`);
    expect(decisions[3].paths).toEqual([expect.stringMatching(/^read \/.*\/fixtures\/example-project\/src\/fees\.js$/)]);
  });

  it('refuses a ticket whose rule is not valid CEL before anything runs (exit 64)', async () => {
    const repo = makeDemoRepo();
    commitFiles(repo, {
      'fixtures/tickets/bad-rule.yaml': [
        'task: t',
        'allow: ["**"]',
        'policy:',
        '  deny: ["Bash(git push"]',
        '  rules:',
        '    - {id: broken, when: "tool ==", effect: deny}',
        'model: replay:../replay/cap-fine.yaml',
        '',
      ].join('\n'),
    });
    const run = await runCli(['run', 'fixtures/tickets/bad-rule.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/bad-rule\.yaml:4:\d+: policy\.deny\.0: `Bash\(git push` is not a rule of the form Tool or Tool\(specifier\)/);
    expect(run.stderr).toMatch(/bad-rule\.yaml:6:\d+: policy\.rules\.0\.when: not a valid CEL condition/);
  });
});
