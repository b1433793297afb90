import { describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { findRepoAndCommit, gitCommonDir, gitPaths, sharedRepoLookups } from '../../src/git/git.js';
import { makeRepo, makeTempDir, runGit, writeFiles } from '../ticket/temp-repo.js';

describe('findRepoAndCommit', () => {
  it('finds the top directory and the commit a rev names, from a folder inside the repository', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'src/deep/a.txt': 'a\n' });
    const head = runGit(repo, ['rev-parse', 'HEAD']).trim();
    expect(await findRepoAndCommit(`${repo}/src/deep`, 'HEAD')).toEqual({ root: repo, commit: head });
  });

  it('still finds the repository when the rev names no commit', async () => {
    const repo = makeRepo();
    expect(await findRepoAndCommit(repo, 'no-such-branch')).toEqual({ root: repo, commit: null });
    // A rev that git would read as an option is never passed to it.
    expect(await findRepoAndCommit(repo, '--all')).toEqual({ root: repo, commit: null });
  });

  it('finds a repository without commits, and nothing outside any repository', async () => {
    const empty = makeTempDir();
    runGit(empty, ['init', '-q']);
    expect(await findRepoAndCommit(empty, 'HEAD')).toEqual({ root: empty, commit: null });
    expect(await findRepoAndCommit(makeTempDir(), 'HEAD')).toEqual({ root: null, commit: null });
  });
});

describe('sharedRepoLookups', () => {
  it('asks git once for each folder and rev, and shares the answer among the asks of one command', async () => {
    const repo = makeRepo();
    const before = runGit(repo, ['rev-parse', 'HEAD']).trim();
    const findRepo = sharedRepoLookups();
    const first = findRepo(repo, 'HEAD');
    expect(await first).toEqual({ root: repo, commit: before });
    writeFiles(repo, { 'b.txt': 'b\n' });
    runGit(repo, ['add', '-A']);
    runGit(repo, ['commit', '-qm', 'second']);
    const after = runGit(repo, ['rev-parse', 'HEAD']).trim();
    // The same ask within the command: the same answer, git not asked again.
    expect(findRepo(repo, 'HEAD')).toBe(first);
    // Another rev is asked of its own; so is everything a new command's lookups ask.
    expect(await findRepo(repo, 'HEAD~1')).toEqual({ root: repo, commit: before });
    expect(await sharedRepoLookups()(repo, 'HEAD')).toEqual({ root: repo, commit: after });
  });
});

describe('gitPaths', () => {
  it('knows where the git files are once a ticket load has found the repository, without asking git again', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'src/a.txt': 'a\n' });
    await findRepoAndCommit(`${repo}/src`, 'HEAD');
    // The answer comes from the load's own git call: with the repository gone, asking git would fail.
    rmSync(`${repo}/.git`, { recursive: true, force: true });
    expect(await gitPaths(repo)).toEqual({ commonDir: `${repo}/.git`, config: `${repo}/.git/config`, gitDir: `${repo}/.git`, index: `${repo}/.git/index` });
    expect(await gitCommonDir(repo)).toBe(`${repo}/.git`);
  });

  it("names a linked worktree's own git dir and index, and the main repository's common dir and config", async () => {
    const repo = makeRepo();
    const linked = `${makeTempDir()}/linked`;
    runGit(repo, ['worktree', 'add', '-q', '--detach', linked]);
    const admin = runGit(linked, ['rev-parse', '--path-format=absolute', '--git-dir']).trim();
    expect(await gitPaths(linked)).toEqual({ commonDir: `${repo}/.git`, config: `${repo}/.git/config`, gitDir: admin, index: `${admin}/index` });
  });

  it('does not remember a failure: a later call asks again', async () => {
    const dir = makeTempDir();
    await expect(gitPaths(dir)).rejects.toThrow(/not a git repository/);
    runGit(dir, ['init', '-q']);
    expect((await gitPaths(dir)).commonDir).toBe(`${dir}/.git`);
  });
});
