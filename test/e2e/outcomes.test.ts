import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli, runReport } from '../support/cli.js';
import { commitFiles, extraWorktrees, gitIn, makeDemoRepo } from '../support/repo.js';

function report(stdout: string) {
  return runReport(stdout) as {
    status: string;
    exitCode: number;
    reason: string;
    budgetExhausted?: string;
    changes: { change: { path: string }; allowed: boolean; reason?: string }[];
    patch: string;
    branch?: string;
    worktree?: string;
  };
}

describe('runs that do not pass end in their documented exit code, with the work kept', () => {
  it('fence violated: exit 2, the path listed, the patch kept, no branch', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'fixtures/tickets/fence-violation.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(2);
    const r = report(run.stdout);
    expect(r.status).toBe('fence_violated');
    expect(r.changes.filter((c) => !c.allowed).map((c) => c.change.path)).toEqual(['fixtures/example-project/README.md']);
    expect(readFileSync(r.patch, 'utf8')).toContain('Now with working fees.');
    expect(r.branch).toBeNull();
    expect(gitIn(repo, ['branch', '--list', 'corral/*']).trim()).toBe('');
    expect(extraWorktrees(repo)).toEqual([]);
  });

  it('budget exhausted: exit 3, saying which budget', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'fixtures/tickets/budget-exhausted.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(3);
    const r = report(run.stdout);
    expect(r.budgetExhausted).toBe('steps');
    expect(r.reason).toContain('steps');
  });

  it('checks never pass: exit 1 after check_rounds rounds back to the agent', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'fixtures/tickets/checks-never-pass.yaml'], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toContain('FAILED');
    expect(run.stdout).toContain('checks still failing after 2 runs (1 sent back to the agent)');
    expect(run.stderr.match(/check ✘/g)).toHaveLength(2);
  });

  it('a token budget and a minute budget end the run as budget_exhausted too', async () => {
    const repo = makeDemoRepo();
    commitFiles(repo, {
      'fixtures/tickets/tokens.yaml': 'task: t\nallow: ["**"]\nbudget: {tokens: 100}\nmodel: replay:../replay/budget-exhausted.yaml\n',
      'fixtures/replay/sleep.yaml': 'turns:\n  - tools:\n      - Bash: {command: sleep 30}\n',
      'fixtures/tickets/minutes.yaml': 'task: t\nallow: ["**"]\nbudget: {minutes: 0.02}\nmodel: replay:../replay/sleep.yaml\n',
    });
    const tokens = await runCli(['run', 'fixtures/tickets/tokens.yaml', '--json'], { cwd: repo });
    expect(tokens.exitCode).toBe(3);
    expect(report(tokens.stdout).budgetExhausted).toBe('tokens');
    const minutes = await runCli(['run', 'fixtures/tickets/minutes.yaml', '--json'], { cwd: repo });
    expect(minutes.exitCode).toBe(3);
    expect(report(minutes.stdout).budgetExhausted).toBe('minutes');
  });

  it('an empty change fails unless allow_empty is set', async () => {
    const repo = makeDemoRepo();
    commitFiles(repo, {
      'fixtures/replay/nothing.yaml': 'turns:\n  - text: Nothing to do.\n',
      'fixtures/tickets/empty.yaml': 'task: t\nallow: ["**"]\nmodel: replay:../replay/nothing.yaml\n',
      'fixtures/tickets/empty-ok.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nmodel: replay:../replay/nothing.yaml\n',
    });
    const empty = await runCli(['run', 'fixtures/tickets/empty.yaml', '--json'], { cwd: repo });
    expect(empty.exitCode).toBe(1);
    expect(report(empty.stdout).reason).toContain('changed nothing');
    const ok = await runCli(['run', 'fixtures/tickets/empty-ok.yaml', '--json'], { cwd: repo });
    expect(ok.exitCode).toBe(0);
  });

  it('a batch exits with the most severe code among its tickets', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'fixtures/tickets/', 'tickets/cap-fine.yaml', '--json'], { cwd: repo });
    const { tickets, totals } = jsonLines(run.stdout);
    expect(tickets.map((t) => t.exitCode).sort()).toEqual([0, 1, 2, 3]);
    expect(totals).toMatchObject({ tickets: 4, exitCode: 2, byStatus: { passed: 1, failed: 1, fence_violated: 1, budget_exhausted: 1 } });
    expect(run.exitCode).toBe(2);
  });

  it('--keep keeps the worktree with the agent work in it and prints where', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'tickets/cap-fine.yaml', '--keep', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const r = report(run.stdout);
    expect(r.worktree).toBeTypeOf('string');
    expect(readFileSync(path.join(r.worktree!, 'fixtures/example-project/src/fees.js'), 'utf8')).toContain('MAX_FINE_CENTS');
    expect(extraWorktrees(repo)).toEqual([r.worktree]);
    gitIn(repo, ['worktree', 'remove', '--force', r.worktree!]);
    expect(existsSync(r.worktree!)).toBe(false);
  });
});

describe('policy and input problems', () => {
  it('stops as blocked (exit 4) after five refused calls in a row', async () => {
    const repo = makeDemoRepo();
    const reads = Array.from({ length: 7 }, (_, i) => `  - tools:\n      - Read: {file_path: /etc/secret-${i}}\n`).join('');
    commitFiles(repo, {
      'fixtures/replay/keeps-trying.yaml': `turns:\n${reads}`,
      'fixtures/tickets/keeps-trying.yaml': 'task: t\nallow: ["**"]\nmodel: replay:../replay/keeps-trying.yaml\n',
    });
    const run = await runCli(['run', 'fixtures/tickets/keeps-trying.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(4);
    const r = runReport(run.stdout);
    expect(r.status).toBe('blocked');
    // Reading outside the worktree needs a person; unattended, each ask is refused.
    expect(r.asked).toHaveLength(5);
    expect(r.asked.map((a: { rule: string }) => a.rule)).toEqual(Array(5).fill('default'));
    expect(r.steps).toBe(5);
  });

  it('refuses duplicate ticket ids and broken replay scripts before anything runs (exit 64)', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'fixtures/tickets/cap-fine.yaml'), readFileSync(path.join(repo, 'tickets/cap-fine.yaml'), 'utf8').replace('../fixtures/replay', '../replay'));
    writeFileSync(path.join(repo, 'fixtures/replay/broken.yaml'), 'turns:\n  - txt: typo\n');
    writeFileSync(path.join(repo, 'fixtures/tickets/broken-script.yaml'), 'task: t\nallow: ["**"]\nmodel: replay:../replay/broken.yaml\n');
    const run = await runCli(['run', 'tickets/', 'fixtures/tickets/'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/tickets\/cap-fine\.yaml:1:1: id: id "cap-fine" is also the id of fixtures\/tickets\/cap-fine\.yaml/);
    expect(run.stderr).toMatch(/fixtures\/replay\/broken\.yaml:2:5: turns\.0:/);
    expect(run.stdout).toBe('');
    expect(extraWorktrees(repo)).toEqual([]);
  });
});

describe('setup commands', () => {
  it('run in the worktree before the agent, and a failing one fails the run (exit 1)', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'fixtures/replay/uses-setup.yaml'), 'turns:\n  - tools:\n      - Bash: {command: "cat made-by-setup.txt >> fixtures/example-project/README.md"}\n  - text: done\n');
    writeFileSync(
      path.join(repo, 'fixtures/tickets/setup.yaml'),
      'task: t\nallow: ["fixtures/**"]\nsetup: ["echo from-setup > made-by-setup.txt"]\nchecks: ["grep -q from-setup fixtures/example-project/README.md"]\nmodel: replay:../replay/uses-setup.yaml\n',
    );
    commitFiles(repo, {
      'fixtures/tickets/setup-fails.yaml': 'task: t\nallow: ["**"]\nsetup: ["exit 7"]\nmodel: replay:../replay/uses-setup.yaml\n',
      '.gitignore': 'made-by-setup.txt\n',
    });
    const ok = await runCli(['run', 'fixtures/tickets/setup.yaml', '--json'], { cwd: repo });
    expect(ok.exitCode).toBe(0);
    const bad = await runCli(['run', 'fixtures/tickets/setup-fails.yaml', '--json'], { cwd: repo });
    expect(bad.exitCode).toBe(1);
    expect(report(bad.stdout).reason).toContain('setup command `exit 7` exited 7');
    // Setup runs before the first model request, so a failing setup costs no request.
    const events = traceTypes(runReport(bad.stdout).trace as string);
    expect(events).toContain('setup');
    expect(events).not.toContain('model_request');
  });
});

describe('the first model request', () => {
  it('goes out while the worktree is being made, and the tools it asks for run in that worktree', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'fixtures/replay/early.yaml'), 'turns:\n  - tools:\n      - Bash: {command: "echo early > fixtures/example-project/early.txt"}\n  - text: done\n');
    commitFiles(repo, { 'fixtures/tickets/early.yaml': 'task: t\nallow: ["fixtures/**"]\nsandbox: none\nmodel: replay:../replay/early.yaml\n' });
    const run = await runCli(['run', 'fixtures/tickets/early.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const r = report(run.stdout);
    expect(r.changes.map((c) => c.change.path)).toEqual(['fixtures/example-project/early.txt']);
    const events = traceTypes(runReport(run.stdout).trace as string);
    // Requested before the worktree existed; the call ran only once worktree, sandbox and guard did.
    expect(events.indexOf('model_request')).toBeLessThan(events.indexOf('worktree'));
    expect(events.indexOf('policy')).toBeLessThan(events.indexOf('tool_call'));
    expect(events.indexOf('sandbox')).toBeLessThan(events.indexOf('tool_call'));
  });
});

function traceTypes(trace: string): string[] {
  return readFileSync(trace, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { type: string }).type);
}

describe('tool output', () => {
  it('is capped with a visible cut, and a tool error goes back to the model while the run goes on', async () => {
    const repo = makeDemoRepo();
    writeFileSync(
      path.join(repo, 'fixtures/replay/loud.yaml'),
      [
        'turns:',
        '  - tools:',
        "      - Bash: {command: \"head -c 200000 /dev/zero | tr '\\\\0' a; echo; echo THE-END\"}",
        '      - Edit: {file_path: fixtures/example-project/src/fees.js, old_string: "not there", new_string: "x"}',
        '      - Teleport: {to: mars}',
        '  - tools:',
        '      - Write: {file_path: fixtures/example-project/out.txt, content: "ok\\n"}',
        '  - text: done',
        '',
      ].join('\n'),
    );
    commitFiles(repo, {
      'fixtures/tickets/loud.yaml': 'task: t\nallow: ["**"]\nmodel: replay:../replay/loud.yaml\n',
    });
    const run = await runCli(['run', 'fixtures/tickets/loud.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const r = runReport(run.stdout);
    const events = readFileSync(r.trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    const results = events.filter((e) => e.type === 'tool_result');
    expect(results.map((e) => [e.tool, e.isError])).toEqual([
      ['Bash', false],
      ['Edit', true],
      ['Teleport', true],
      ['Write', false],
    ]);
    expect(results[0].bytes).toBeLessThan(31_000);
    expect(r.denied.map((d: { rule: string }) => d.rule)).toEqual(['baseline.unknown-tool']);
  });
});
