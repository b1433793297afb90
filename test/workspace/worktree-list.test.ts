import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { snapshotWorktree } from '../../src/workspace/changes.js';
import { commitToBranch } from '../../src/workspace/keep.js';
import { createWorktree, listCorralWorktrees, lockReason, removeStaleWorktrees, removeWorktree, runTempDirOf } from '../../src/workspace/worktree.js';
import { deadPid, gitIn, linkedWorktree, listedDirs, repoWithFiles } from '../support/repo.js';

// Which worktrees exist, which are locked and by whom, which are prunable and which branch
// each has checked out are asked of git (`git worktree list`), never read from
// `.git/worktrees/*` or HEAD files: in a reftable repository those are not files.


describe('corral worktrees as git lists them', () => {
  it("removes a killed run's worktree, its folder gone or not, and leaves another host's and a live run's alone", async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-wtl-');
    const killed = linkedWorktree(repo, 'killed', ['--detach', '--lock', '--reason', lockReason(deadPid())]);
    mkdirSync(runTempDirOf(killed));
    const killedGone = linkedWorktree(repo, 'killed-gone', ['--detach', '--lock', '--reason', lockReason(deadPid())]);
    rmSync(killedGone, { recursive: true, force: true });
    const otherHost = linkedWorktree(repo, 'other-host', ['--detach', '--lock', '--reason', `corral pid=${deadPid()} host=not-${hostname()}`]);
    const live = linkedWorktree(repo, 'live', ['--detach', '--lock', '--reason', lockReason()]);
    const someoneElses = linkedWorktree(repo, 'someone-elses', ['--detach', '--lock', '--reason', 'on a USB disk']);
    // Loose refs gone: nothing of this may depend on ref files.
    gitIn(repo, ['pack-refs', '--all']);

    const listed = await listCorralWorktrees(repo);
    expect(listed.map(({ dir, stale }) => ({ dir, stale })).sort((a, b) => a.dir.localeCompare(b.dir))).toEqual(
      [
        { dir: killed, stale: true },
        { dir: killedGone, stale: true },
        { dir: otherHost, stale: false },
        { dir: live, stale: false },
      ].sort((a, b) => a.dir.localeCompare(b.dir)),
    );

    const cleaned = await removeStaleWorktrees(repo);
    expect(cleaned.filter((item) => item.kind === 'worktree').map((item) => item.path).sort()).toEqual([killed, killedGone].sort());
    // Nothing was changed in either: no patch to save.
    expect(cleaned.filter((item) => item.kind === 'worktree').map((item) => item.patch ?? null)).toEqual([null, null]);
    expect(existsSync(killed)).toBe(false);
    expect(existsSync(runTempDirOf(killed))).toBe(false);
    expect(listedDirs(repo).sort()).toEqual([repo, otherHost, live, someoneElses].sort());
  });

  it("prunes a worktree whose folder is gone before adding its own, and a killed run's too", async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-wtl-');
    const lost = linkedWorktree(repo, 'lost', ['--detach']);
    rmSync(lost, { recursive: true, force: true });
    const killed = linkedWorktree(repo, 'killed', ['--detach', '--lock', '--reason', lockReason(deadPid())]);
    expect(gitIn(repo, ['worktree', 'list', '--porcelain'])).toMatch(/^prunable /m);

    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const wt = await createWorktree(repo, base, 'after-lost');
    expect(listedDirs(repo).sort()).toEqual([repo, wt.dir].sort());
    expect(existsSync(killed)).toBe(false);
    // Its index was found through git, and is the base's.
    expect(wt.indexFile).toBe(gitIn(wt.dir, ['rev-parse', '--path-format=absolute', '--git-path', 'index']).trim());
    expect(wt.baseIndex?.bytes.length).toBeGreaterThan(0);
    await removeWorktree(wt);
    expect(listedDirs(repo)).toEqual([repo]);
  });

  it('never moves a branch checked out where no HEAD file says so: a symlinked HEAD whose ref was packed', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-wtl-');
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    gitIn(repo, ['branch', 'corral/busy']);
    const linked = linkedWorktree(repo, 'linked', ['--detach']);
    // git still supports a HEAD that is a symlink to its ref (core.preferSymlinkRefs); once
    // the refs are packed it points at no file, and only git can say what it names. The
    // main worktree too: its branch must not move either.
    gitIn(linked, ['-c', 'core.preferSymlinkRefs=true', 'symbolic-ref', 'HEAD', 'refs/heads/corral/busy']);
    gitIn(repo, ['-c', 'core.preferSymlinkRefs=true', 'symbolic-ref', 'HEAD', 'refs/heads/main']);
    gitIn(repo, ['pack-refs', '--all']);
    expect(gitIn(linked, ['symbolic-ref', 'HEAD']).trim()).toBe('refs/heads/corral/busy');

    for (const [branch, suffix] of [['corral/busy', 'run-1'], ['main', 'run-2']] as const) {
      const wt = await createWorktree(repo, base, 'busy');
      writeFileSync(path.join(wt.dir, 'a.txt'), `${suffix}\n`);
      const snapshot = await snapshotWorktree(wt);
      const result = await commitToBranch(snapshot, branch, 'x\n', suffix);
      await snapshot.dispose();
      await removeWorktree(wt);
      expect(result.branch).toBe(`${branch}-${suffix}`);
      expect(gitIn(repo, ['rev-parse', branch]).trim()).toBe(base);
    }
    // A branch nobody has checked out is moved as asked.
    const wt = await createWorktree(repo, base, 'free');
    const snapshot = await snapshotWorktree(wt);
    expect((await commitToBranch(snapshot, 'corral/free', 'x\n', 'run-3')).branch).toBe('corral/free');
    await snapshot.dispose();
    await removeWorktree(wt);
  });
});
