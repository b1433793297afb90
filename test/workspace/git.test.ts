import { describe, expect, it } from 'vitest';
import { findRepoAndCommit, gitCommonDir, rememberGitCommonDir } from '../../src/workspace/git.js';
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

describe('gitCommonDir', () => {
  it('waits for an answer another git call is about to give instead of asking again', async () => {
    const repo = makeRepo();
    let answer!: (dir: string) => void;
    rememberGitCommonDir(repo, new Promise((resolve) => (answer = resolve)));
    const asked = gitCommonDir(repo);
    answer('/the/answer/given');
    expect(await asked).toBe('/the/answer/given');
  });

  it('asks git itself when the other answer is empty or fails', async () => {
    const empty = makeRepo();
    rememberGitCommonDir(empty, Promise.resolve(''));
    expect(await gitCommonDir(empty)).toBe(`${empty}/.git`);
    const failed = makeRepo();
    rememberGitCommonDir(failed, Promise.reject(new Error('no answer')));
    expect(await gitCommonDir(failed)).toBe(`${failed}/.git`);
  });
});
