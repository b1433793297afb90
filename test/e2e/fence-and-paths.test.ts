import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { commitFiles, gitIn, makeDemoRepo, tempDir } from '../support/repo.js';

describe('file tools and the guard, through the real CLI', () => {
  it('denies writes outside the worktree and refuses reads there, through .. and symlinks, and writes nothing there', async () => {
    const repo = makeDemoRepo();
    const outside = tempDir('corral-outside-');
    writeFileSync(path.join(outside, 'secret.txt'), 'top secret\n');
    // A symlink committed into the repository that points out of it.
    symlinkSync(outside, path.join(repo, 'fixtures', 'escape'));
    symlinkSync(path.join(outside, 'created-through-link.txt'), path.join(repo, 'fixtures', 'dangling.txt'));
    commitFiles(repo, {
      'fixtures/replay/escapes.yaml': [
        'turns:',
        '  - tools:',
        `      - Read: {file_path: ${path.join(outside, 'secret.txt')}}`,
        '      - Read: {file_path: fixtures/escape/secret.txt}',
        `      - Write: {file_path: ${path.join(outside, 'new.txt')}, content: x}`,
        '      - Write: {file_path: fixtures/dangling.txt, content: x}',
        '      - Edit: {file_path: fixtures/escape/secret.txt, old_string: top, new_string: bottom}',
        `      - Glob: {pattern: "*", path: ${outside}}`,
        '      - Glob: {pattern: "../../*"}',
        '      - Grep: {pattern: secret, path: fixtures/escape}',
        '      - Write: {file_path: fixtures/example-project/ok.txt, content: "inside\\n"}',
        '  - text: done',
        '',
      ].join('\n'),
      'fixtures/tickets/escapes.yaml': 'task: t\nallow: ["fixtures/example-project/**"]\nmodel: replay:../replay/escapes.yaml\n',
      // Eight refusals in a row would stop the run as blocked at the default limit of five.
      'corral.yaml': 'max_refusals_in_a_row: 10\n',
    });
    const run = await runCli(['run', 'fixtures/tickets/escapes.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    // Writing outside is a hard limit; reading outside needs a person, so unattended it is refused.
    expect(report.denied.map((d: { call: string; rule: string }) => `${d.call} ${d.rule}`)).toEqual([
      `Write(${path.join(outside, 'new.txt')}) baseline.write-outside`,
      'Write(fixtures/dangling.txt) baseline.write-outside',
      'Edit(fixtures/escape/secret.txt) baseline.write-outside',
    ]);
    expect(report.asked.map((d: { call: string; rule: string }) => `${d.call} ${d.rule}`)).toEqual([
      `Read(${path.join(outside, 'secret.txt')}) default`,
      'Read(fixtures/escape/secret.txt) default',
      `Glob(*) default`,
      'Grep(secret) default',
    ]);
    const results = readFileSync(report.trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.type === 'tool_result');
    // The ../../* Glob is refused by the tool itself, the Grep through the symlink by the guard.
    expect(results.map((r: { isError: boolean }) => r.isError)).toEqual([true, true, true, true, true, true, true, true, false]);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
    expect(existsSync(path.join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(path.join(outside, 'created-through-link.txt'))).toBe(false);
    expect(report.status).toBe('passed');
  });
});

describe('the fence through the real CLI', () => {
  it('lists deletes, renames, mode changes and agent commits, and forbid beats allow', async () => {
    const repo = makeDemoRepo();
    commitFiles(repo, {
      'fixtures/replay/kinds.yaml': [
        'turns:',
        '  - tools:',
        '      - Bash: {command: "rm fixtures/example-project/test/slug.test.js && git mv fixtures/example-project/README.md fixtures/example-project/READ.md && chmod +x fixtures/example-project/src/slug.js"}',
        '      - Bash: {command: "echo x > fixtures/example-project/committed.txt && git add -A && GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@b GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@b git commit -qm agent"}',
        '      - Write: {file_path: fixtures/example-project/package.json, content: "{}\\n"}',
        // The guard cannot see what a program writes; the fence at the end still proves it.
        '      - Bash: {command: "node -e \\"require(\'fs\').writeFileSync(\'fixtures/example-project/package.json\', \'{}\')\\""}',
        '  - text: done',
        '',
      ].join('\n'),
      'fixtures/tickets/kinds.yaml': [
        'task: t',
        'allow: ["fixtures/example-project/**"]',
        'forbid: ["**/package.json"]',
        'policy:',
        '  allow: ["Bash(git mv:*)", "Bash(git add:*)", "Bash(git commit:*)", "Bash(node -e:*)"]',
        // The sandbox keeps git metadata read-only, so the agent could not commit in it.
        'sandbox: none',
        'model: replay:../replay/kinds.yaml',
        '',
      ].join('\n'),
    });
    const run = await runCli(['run', 'fixtures/tickets/kinds.yaml'], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(run.exitCode).toBe(2);
    const out = run.stdout;
    // The direct write was denied when it was made.
    expect(out).toMatch(/Write\(fixtures\/example-project\/package\.json\).*fence\.forbidden/);
    expect(out).toMatch(/D {2}fixtures\/example-project\/test\/slug\.test\.js +allowed/);
    expect(out).toMatch(/R {2}fixtures\/example-project\/README\.md → fixtures\/example-project\/READ\.md +allowed/);
    expect(out).toMatch(/m {2}fixtures\/example-project\/src\/slug\.js +allowed/);
    expect(out).toMatch(/A {2}fixtures\/example-project\/committed\.txt +allowed/);
    expect(out).toMatch(/M {2}fixtures\/example-project\/package\.json +✘ matches forbid \*\*\/package\.json/);
    // The host's main branch never moved, though the agent committed in the worktree.
    expect(gitIn(repo, ['log', '--oneline', '-1', 'main'])).toContain('test files');
  });

  it('starts from a base other than HEAD', async () => {
    const repo = makeDemoRepo();
    const first = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    commitFiles(repo, { 'later.txt': 'added after the base\n' });
    commitFiles(repo, {
      'fixtures/replay/base.yaml': 'turns:\n  - tools:\n      - Bash: {command: "test ! -e later.txt && echo at-base > fixtures/example-project/base.txt"}\n  - text: done\n',
      'fixtures/tickets/base.yaml': `task: t\nallow: ["fixtures/**"]\nbase: ${first}\nchecks: ["test -e fixtures/example-project/base.txt"]\nmodel: replay:../replay/base.yaml\n`,
    });
    const run = await runCli(['run', 'fixtures/tickets/base.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.baseCommit).toBe(first);
    expect(gitIn(repo, ['rev-parse', `${report.branch}^`]).trim()).toBe(first);
  });
});

describe('secrets', () => {
  it('a change that holds the API key is a fence violation, redacted in the patch and never committed', async () => {
    const repo = makeDemoRepo();
    const key = 'sk-ant-api03-this-is-a-fake-key-for-tests-0123456789';
    commitFiles(repo, {
      'fixtures/replay/leak.yaml': [
        'turns:',
        '  - tools:',
        // A script hides what it does from the guard; a ticket rule lets it run. corral is
        // its shell's parent, or (under the child subreaper) grandparent.
        "      - Write: {file_path: fixtures/leak.sh, content: \"for p in $PPID $(cut -d' ' -f4 /proc/$PPID/stat); do tr '\\\\0' '\\\\n' < /proc/$p/environ; done | grep ANTHROPIC > fixtures/example-project/leak.txt; env > fixtures/example-project/env.txt\\n\"}",
        '      - Bash: {command: "sh fixtures/leak.sh"}',
        '  - text: done',
        '',
      ].join('\n'),
      // Unsandboxed, a command can read corral's own environment; the sandbox's /proc shows
      // only its own processes (test/e2e/sandbox.test.ts), so this is the fallback's test.
      'fixtures/tickets/leak.yaml': 'task: t\nallow: ["fixtures/**"]\npolicy: {allow: ["Bash(sh fixtures/leak.sh)"]}\nsandbox: none\nmodel: replay:../replay/leak.yaml\n',
    });
    const run = await runCli(['run', 'fixtures/tickets/leak.yaml', '--json'], { cwd: repo, env: { ANTHROPIC_API_KEY: key } });
    expect(run.exitCode).toBe(2);
    const report = runReport(run.stdout);
    expect(report.reason).toContain('the change contains the value of ANTHROPIC_API_KEY');
    const patch = readFileSync(report.patch, 'utf8');
    expect(patch).toContain('[REDACTED ANTHROPIC_API_KEY]');
    expect(patch).not.toContain(key);
    // The tools' own environment never had it; only reading corral's process (unsandboxed) finds it.
    const envDump = patch.split('diff --git').find((part) => part.includes('env.txt'))!;
    expect(envDump).toContain('+PATH=');
    expect(envDump).not.toContain('ANTHROPIC');
    expect(report.branch).toBeNull();
    expect(readFileSync(report.trace, 'utf8')).not.toContain(key);
    expect(run.stdout + run.stderr).not.toContain(key);
  });
});

describe('run records inside the checkout', () => {
  it('keeps a --runs-dir inside the checkout out of the host check, as it does .corral/', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'tickets/cap-fine.yaml', 'tickets/fix-days-overdue.yaml', '--jobs', '2', '--runs-dir', 'ci-runs', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const reports = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { status?: string; patch?: string; hostChanges?: string[] }).filter((line) => line.status !== undefined);
    expect(reports.map((report) => report.status)).toEqual(['passed', 'passed']);
    for (const report of reports) {
      expect(report.patch?.startsWith(path.join(repo, 'ci-runs'))).toBe(true);
      expect(report.hostChanges).toEqual([]);
    }
  });

  it('still sees a file written elsewhere in the checkout beside them', async () => {
    const repo = makeDemoRepo();
    const { recordHostState, hostDifferences } = await import('../../src/workspace/host-integrity.js');
    const before = await recordHostState(repo, undefined, [path.join(repo, 'ci-runs')]);
    mkdirSync(path.join(repo, 'ci-runs'), { recursive: true });
    writeFileSync(path.join(repo, 'ci-runs', 'trace.jsonl'), '{}\n');
    writeFileSync(path.join(repo, 'ci-runs.txt'), 'not a run record\n');
    const differences = hostDifferences(before, await recordHostState(repo, before));
    expect(differences.join('\n')).toContain('ci-runs.txt');
    expect(differences.join('\n')).not.toContain('trace.jsonl');
  });
});

describe('patch and exit codes of failed runs', () => {
  it('keeps the patch for exits 1 and 3, and exits 70 on an internal error', async () => {
    const repo = makeDemoRepo();
    for (const ticket of ['checks-never-pass', 'budget-exhausted']) {
      const run = await runCli(['run', `fixtures/tickets/${ticket}.yaml`, '--json'], { cwd: repo });
      const report = runReport(run.stdout);
      expect(existsSync(report.patch)).toBe(true);
    }
    // A file where the default runs folder goes: a bad --runs-dir is refused up front (exit 64) instead.
    const brokenRepo = makeDemoRepo();
    writeFileSync(path.join(brokenRepo, '.corral'), 'a file where the runs folder goes\n');
    const broken = await runCli(['run', 'tickets/cap-fine.yaml'], { cwd: brokenRepo });
    expect(broken.exitCode).toBe(70);
    expect(broken.stderr).toContain('internal error');
  });
});
