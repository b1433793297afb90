import { execa } from 'execa';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runReport } from '../support/cli.js';
import { commitFiles, extraWorktrees, makeDemoRepo } from '../support/repo.js';

describe('Ctrl-C during a tool call', () => {
  it('stops the run, kills the command, keeps the patch, removes the worktree and exits 130', async () => {
    const repo = makeDemoRepo();
    writeFileSync(
      path.join(repo, 'fixtures/replay/slow.yaml'),
      'turns:\n  - tools:\n      - Write: {file_path: fixtures/example-project/notes.txt, content: "half done\\n"}\n      - Bash: {command: "echo started; sleep 600"}\n',
    );
    commitFiles(repo, {
      'fixtures/tickets/slow.yaml': 'task: t\nallow: ["**"]\nmodel: replay:../replay/slow.yaml\nsandbox: auto\n',
    });

    const child = execa('node', [path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'run', 'fixtures/tickets/slow.yaml', '--json'], {
      cwd: repo,
      reject: false,
      stdin: 'ignore',
      env: { NO_COLOR: '1' },
    });
    // Wait until the agent's first turn is being carried out: the model has answered...
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        // The model answers while the worktree is being made; both have happened here.
        if (seen.includes('step 1') && seen.includes('worktree at')) resolve();
      });
    });
    // ...and its Write has landed in the worktree, so there is work to keep.
    const worktree = extraWorktrees(repo)[0]!;
    while (!existsSync(path.join(worktree, 'fixtures/example-project/notes.txt'))) await new Promise((r) => setTimeout(r, 20));
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    const report = runReport(String(result.stdout));
    expect(report.status).toBe('interrupted');
    expect(report.changes.map((c: { change: { path: string } }) => c.change.path)).toEqual(['fixtures/example-project/notes.txt']);
    expect(existsSync(report.patch)).toBe(true);
    expect(extraWorktrees(repo)).toEqual([]);
    expect(existsSync(worktree)).toBe(false);
  });
});

describe('Ctrl-C while a PreToolUse hook decides', () => {
  it('refuses the call instead of running it on the silence of the killed hook', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'fixtures/replay/hooked.yaml'), 'turns:\n  - tools:\n      - Write: {file_path: fixtures/example-project/blocked.txt, content: "the hook would block this\\n"}\n');
    commitFiles(repo, {
      'fixtures/tickets/hooked.yaml': 'task: t\nallow: ["**"]\nmodel: replay:../replay/hooked.yaml\nsandbox: auto\n',
      // A slow hook that would block the write.
      'corral.yaml': 'hooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n        - {type: command, command: "echo started >&2; sleep 30; exit 2"}\n',
    });
    const child = execa('node', [path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'run', 'fixtures/tickets/hooked.yaml', '--json'], { cwd: repo, reject: false, stdin: 'ignore', env: { NO_COLOR: '1' } });
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('step 1') && seen.includes('worktree at')) resolve();
      });
    });
    // Give the hook a moment to start, then interrupt while it runs.
    await new Promise((r) => setTimeout(r, 500));
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    const report = runReport(String(result.stdout));
    expect(report.status).toBe('interrupted');
    expect(report.changes).toEqual([]);
    expect(report.denied).toEqual([expect.objectContaining({ rule: 'run.interrupted' })]);
    expect(extraWorktrees(repo)).toEqual([]);
  });
});
