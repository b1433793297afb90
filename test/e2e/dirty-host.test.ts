import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

// A run starts from a commit, so what the host checkout holds beyond it is not part of the
// run: the summary and the JSON say so. --from-worktree starts from the working tree
// instead, leaving the host's index, refs and files exactly as they were.

function dirtyRepo(): string {
  const repo = repoWithFiles({
    'notes.txt': 'clean\n',
    'a.txt': 'a\n',
    'b.txt': 'b\n',
    'c.txt': 'c\n',
    'src/x.txt': 'x\n',
    'ticket.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:replay.yaml\nsandbox: none\nchecks:\n  - run: grep -q dirty notes.txt && test -f new.txt\n',
    'replay.yaml': 'turns:\n  - tools:\n      - Write: {file_path: src/x.txt, content: "y\\n"}\n  - text: done\n',
  });
  // 3 modified, 1 staged, 1 untracked.
  writeFileSync(path.join(repo, 'notes.txt'), 'dirty\n');
  writeFileSync(path.join(repo, 'a.txt'), 'a2\n');
  writeFileSync(path.join(repo, 'b.txt'), 'b2\n');
  writeFileSync(path.join(repo, 'c.txt'), 'c2\n');
  gitIn(repo, ['add', 'c.txt']);
  writeFileSync(path.join(repo, 'new.txt'), 'new\n');
  return repo;
}

function hostState(repo: string): string {
  return [gitIn(repo, ['status', '--porcelain=v1', '--untracked-files=all', '--', '.', ':!.corral']), gitIn(repo, ['ls-files', '--stage']), gitIn(repo, ['rev-parse', 'HEAD']), gitIn(repo, ['for-each-ref', '--format=%(refname) %(objectname)']).split('\n').filter((line) => !line.startsWith('refs/heads/corral/')).join('\n')].join('\n--\n');
}

describe('a dirty host checkout', () => {
  it('is named in the summary and the JSON as not part of the run', async () => {
    const repo = dirtyRepo();
    const json = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    const report = runReport(json.stdout);
    expect(report.hostUncommitted).toEqual({ modified: 3, staged: 1, untracked: 1, inRun: false });
    // The worktree held HEAD's notes.txt, so the check failed: the run did not see the host's edits.
    expect(report.status).toBe('failed');
    const text = await runCli(['run', 'ticket.yaml'], { cwd: repo });
    expect(text.stdout + text.stderr).toContain('not part of this run: 3 modified, 1 staged, 1 untracked');
  });

  it('--from-worktree starts from the working tree and leaves the host index, refs and files as they were', async () => {
    const repo = dirtyRepo();
    const head = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const before = hostState(repo);
    const run = await runCli(['run', 'ticket.yaml', '--json', '--from-worktree'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(report.status).toBe('passed');
    expect(report.hostUncommitted).toEqual({ modified: 3, staged: 1, untracked: 1, inRun: true });
    expect(hostState(repo)).toBe(before);
    expect(readFileSync(path.join(repo, 'notes.txt'), 'utf8')).toBe('dirty\n');
    // The result sits on a commit of the working tree, which sits on HEAD.
    expect(report.baseCommit).not.toBe(head);
    expect(gitIn(repo, ['rev-parse', `${report.branch}^`]).trim()).toBe(report.baseCommit);
    expect(gitIn(repo, ['rev-parse', `${report.baseCommit}^`]).trim()).toBe(head);
    expect(gitIn(repo, ['show', `${report.baseCommit}:new.txt`])).toBe('new\n');
    // The patch is the agent's change alone, against the working tree.
    expect(readFileSync(report.patch, 'utf8')).toContain('src/x.txt');
    expect(readFileSync(report.patch, 'utf8')).not.toContain('notes.txt');
    const text = await runCli(['run', 'ticket.yaml', '--from-worktree'], { cwd: repo });
    expect(text.stdout + text.stderr).toContain('started from your working tree (--from-worktree): 3 modified, 1 staged, 1 untracked');
  });
});
