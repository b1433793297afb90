import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createWorktree, lockReason, removeWorktree } from '../../src/workspace/worktree.js';
import { deadPid, gitIn, linkedWorktree, listedDirs, repoWithFiles } from '../support/repo.js';

// A batch lists a repository's worktrees once to find killed runs' leftovers, and again
// only when the answer may have changed: what the listing is shared for must not let a
// leftover that appears during the batch through.


describe('the worktree listing a batch shares', () => {
  it("still finds a killed run's worktree that appears after the first ticket's listing", async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-shared-list-');
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const first = await createWorktree(repo, base, 'first');
    // Only worktrees: temp dirs of other dead processes (test workers ended by a signal) may be swept too.
    expect((first.salvaged ?? []).filter((item) => item.kind === 'worktree')).toEqual([]);
    const killed = linkedWorktree(repo, 'killed', ['--detach', '--lock', '--reason', lockReason(deadPid())]);
    const second = await createWorktree(repo, base, 'second');
    expect((second.salvaged ?? []).filter((item) => item.kind === 'worktree').map((item) => item.path)).toEqual([killed]);
    expect(existsSync(killed)).toBe(false);
    await removeWorktree(first);
    await removeWorktree(second);
  });

  it('prunes a worktree whose folder went after the first ticket\'s listing', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-shared-list-');
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const plain = linkedWorktree(repo, 'plain', ['--detach']);
    const first = await createWorktree(repo, base, 'first');
    rmSync(plain, { recursive: true, force: true });
    const second = await createWorktree(repo, base, 'second');
    expect(listedDirs(repo)).not.toContain(plain);
    await removeWorktree(first);
    await removeWorktree(second);
  });

  it('lists again once a corral process that owned a worktree at the last listing has died', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-shared-list-');
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    // Another corral run, alive while the first ticket lists, killed before the second.
    const other = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = other.pid!;
    const owned = linkedWorktree(repo, 'owned', ['--detach', '--lock', '--reason', lockReason(pid)]);
    const first = await createWorktree(repo, base, 'first');
    // Only worktrees: temp dirs of other dead processes (test workers ended by a signal) may be swept too.
    expect((first.salvaged ?? []).filter((item) => item.kind === 'worktree')).toEqual([]);
    other.kill('SIGKILL');
    await once(other, 'exit');
    const second = await createWorktree(repo, base, 'second');
    expect((second.salvaged ?? []).filter((item) => item.kind === 'worktree').map((item) => item.path)).toEqual([owned]);
    await removeWorktree(first);
    await removeWorktree(second);
  });
});
