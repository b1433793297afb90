import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { runCli, runReport } from '../support/cli.js';
import { commitFiles, gitIn, makeDemoRepo } from '../support/repo.js';

// The user's own git activity in the host while a run goes on (here a commit and a new
// branch, made between the worktree's creation and the end of the agent's work) is not an
// agent escape when the agent could not have reached the host.

const probe = await probeBubblewrap();

/** The worktree of the one run under way in `repo`, once its trace names it. */
async function worktreeOfRun(repo: string): Promise<string> {
  const runs = path.join(repo, '.corral', 'runs');
  for (;;) {
    for (const run of existsSync(runs) ? readdirSync(runs) : []) {
      const trace = path.join(runs, run, 'trace.jsonl');
      const lines = existsSync(trace) ? readFileSync(trace, 'utf8').split('\n') : [];
      for (const line of lines) {
        if (!line.includes('"worktree"')) continue;
        const event = JSON.parse(line) as { type: string; dir?: string };
        if (event.type === 'worktree' && event.dir) return event.dir;
      }
    }
    await sleep(20);
  }
}

async function runWithHostActivity(sandbox: string) {
  const repo = makeDemoRepo();
  commitFiles(repo, {
    '.gitignore': 'gate\n',
    'fixtures/replay/wait.yaml': [
      'turns:',
      '  - tools:',
      '      - Write: {file_path: fixtures/example-project/note.txt, content: "hi\\n"}',
      '      - Bash: {command: "until [ -e gate ]; do sleep 0.05; done"}',
      '  - text: done',
      '',
    ].join('\n'),
    'tickets/wait.yaml': `task: t\nallow: ["fixtures/example-project/**"]\nmodel: replay:../fixtures/replay/wait.yaml\nsandbox: ${sandbox}\npolicy:\n  allow: ["Bash(until:*)"]\n`,
  });
  const running = runCli(['run', 'tickets/wait.yaml', '--json'], { cwd: repo });
  const worktree = await worktreeOfRun(repo);
  // The user commits in the host and starts a branch, as they might while a run goes on.
  writeFileSync(path.join(repo, 'user.txt'), 'mine\n');
  gitIn(repo, ['add', 'user.txt']);
  gitIn(repo, ['commit', '-qm', 'the user works on']);
  gitIn(repo, ['branch', 'feature']);
  writeFileSync(path.join(worktree, 'gate'), '');
  const run = await running;
  return { repo, run, report: runReport(run.stdout) };
}

describe('the host repository changed by someone else during a run', () => {
  it.skipIf(!probe.ok)('with the sandbox, is concurrent activity: host_changed, exit 7, not a fence violation', async () => {
    const { repo, run, report } = await runWithHostActivity('bwrap');
    expect(report.sandbox).toBe('bwrap');
    expect(report.status).toBe('host_changed');
    expect(run.exitCode).toBe(7);
    expect(report.exitCode).toBe(7);
    expect(report.reason).toContain('concurrent activity');
    expect(report.hostChanges.join('\n')).toContain('refs/heads/feature');
    // The agent's work is kept as a patch, and nothing is committed on its judgement.
    expect(readFileSync(report.patch, 'utf8')).toContain('note.txt');
    expect(report.branch).toBeNull();
    expect(gitIn(repo, ['branch', '--list', 'corral/*']).trim()).toBe('');
  });

  it('without a sandbox, stays a fence violation that says it may have been your own activity', async () => {
    const { run, report } = await runWithHostActivity('none');
    expect(report.status).toBe('fence_violated');
    expect(run.exitCode).toBe(2);
    expect(report.reason).toContain('without a sandbox');
    expect(report.reason).toContain('your own git activity');
  });
});
