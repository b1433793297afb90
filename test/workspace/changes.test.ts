import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listChanges, snapshotWorktree } from '../../src/workspace/changes.js';
import { checkFence } from '../../src/workspace/fence.js';
import { commitToBranch, diffSnapshot } from '../../src/workspace/keep.js';
import { createWorktree, removeWorktree } from '../../src/workspace/worktree.js';
import { gitIn, tempDir } from '../support/repo.js';

function makeRepo(): { repo: string; base: string } {
  const repo = tempDir('corral-ws-');
  gitIn(repo, ['init', '-q']);
  writeFileSync(path.join(repo, 'keep.txt'), 'keep\n');
  writeFileSync(path.join(repo, 'edit.txt'), 'one\n');
  writeFileSync(path.join(repo, 'gone.txt'), 'gone\n');
  writeFileSync(path.join(repo, 'move-me.txt'), 'a file long enough to be detected as a rename\n'.repeat(5));
  writeFileSync(path.join(repo, 'script.sh'), 'echo hi\n');
  writeFileSync(path.join(repo, '.gitignore'), 'ignored/\n');
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-qm', 'base']);
  return { repo, base: gitIn(repo, ['rev-parse', 'HEAD']).trim() };
}

describe('worktree, changes, patch and branch on a real repository', () => {
  it('sees a same-size edit made in the second of the checkout when the snapshot comes a second later', async () => {
    // git trusts its stat cache (to the second) for an entry older than the index file:
    // a copied index with a new mtime would hide this edit from the fence and the patch.
    const { repo, base } = makeRepo();
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 20));
    const wt = await createWorktree(repo, base, 'racy');
    try {
      writeFileSync(path.join(wt.dir, 'edit.txt'), 'six\n');
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const snapshot = await snapshotWorktree(wt);
      try {
        expect(await listChanges(snapshot)).toEqual([{ kind: 'modified', path: 'edit.txt' }]);
      } finally {
        await snapshot.dispose();
      }
    } finally {
      await removeWorktree(wt);
    }
  });

  it('lists every kind of change against the base, committed ones included, and never touches the host', async () => {
    const { repo, base } = makeRepo();
    const wt = await createWorktree(repo, base, 'kinds');
    expect(path.relative(repo, wt.dir).startsWith('..')).toBe(true);
    try {
      writeFileSync(path.join(wt.dir, 'edit.txt'), 'two\n');
      rmSync(path.join(wt.dir, 'gone.txt'));
      gitIn(wt.dir, ['mv', 'move-me.txt', 'moved.txt']);
      chmodSync(path.join(wt.dir, 'script.sh'), 0o755);
      writeFileSync(path.join(wt.dir, 'untracked.txt'), 'new\n');
      execFileSync('mkdir', ['-p', path.join(wt.dir, 'ignored')]);
      writeFileSync(path.join(wt.dir, 'ignored', 'cache.bin'), 'x');
      writeFileSync(path.join(wt.dir, 'committed.txt'), 'agent commit\n');
      gitIn(wt.dir, ['add', 'committed.txt']);
      gitIn(wt.dir, ['commit', '-qm', 'agent commit']);

      const snapshot = await snapshotWorktree(wt);
      const changes = await listChanges(snapshot);
      expect(changes.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
        { kind: 'added', path: 'committed.txt' },
        { kind: 'modified', path: 'edit.txt' },
        { kind: 'deleted', path: 'gone.txt' },
        { kind: 'renamed', path: 'moved.txt', from: 'move-me.txt' },
        { kind: 'mode', path: 'script.sh' },
        { kind: 'added', path: 'untracked.txt' },
      ]);

      const fence = checkFence(changes, ['*.txt'], ['gone.txt']);
      expect(fence.ok).toBe(false);
      const refused = fence.verdicts.filter((v) => !v.allowed).map((v) => [v.change.path, v.reason]);
      expect(refused).toEqual([
        ['gone.txt', 'matches forbid gone.txt'],
        ['script.sh', 'matches no allow glob'],
      ]);
      await snapshot.dispose();
      // The worktree's own index was not used: git status there still shows the untracked file as untracked.
      expect(gitIn(wt.dir, ['status', '--porcelain'])).toContain('?? untracked.txt');
    } finally {
      await removeWorktree(wt);
    }
    expect(gitIn(repo, ['status', '--porcelain']).trim()).toBe('');
    expect(gitIn(repo, ['worktree', 'list']).trim().split('\n')).toHaveLength(1);
  });

  it('writes a patch with binary and untracked files that git apply reproduces exactly', async () => {
    const { repo, base } = makeRepo();
    const wt = await createWorktree(repo, base, 'patch');
    const binary = Buffer.from([0, 1, 2, 255, 254, 0, 10, 13, 0]);
    writeFileSync(path.join(wt.dir, 'blob.bin'), binary);
    writeFileSync(path.join(wt.dir, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    writeFileSync(path.join(wt.dir, 'edit.txt'), 'two\n');
    const patch = path.join(tempDir('corral-patch-'), 'patch.diff');
    const snapshot = await snapshotWorktree(wt);
    writeFileSync(patch, await diffSnapshot(snapshot));
    const { commit } = await commitToBranch(snapshot, 'corral/patch-test', 'corral: test\n', 'x');
    await snapshot.dispose();
    await removeWorktree(wt);

    const check = await createWorktree(repo, base, 'apply');
    try {
      execFileSync('git', ['apply', patch], { cwd: check.dir });
      expect(readFileSync(path.join(check.dir, 'blob.bin'))).toEqual(binary);
      expect(readFileSync(path.join(check.dir, 'latin1.txt'))).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
      expect(readFileSync(path.join(check.dir, 'edit.txt'), 'utf8')).toBe('two\n');
    } finally {
      await removeWorktree(check);
    }
    expect(gitIn(repo, ['rev-parse', 'corral/patch-test']).trim()).toBe(commit);
    expect(gitIn(repo, ['rev-parse', 'corral/patch-test^']).trim()).toBe(base);
    expect(gitIn(repo, ['diff', '--name-only', base, commit]).trim().split('\n').sort()).toEqual(['blob.bin', 'edit.txt', 'latin1.txt']);
  });

  it('never moves a result branch that is checked out somewhere', async () => {
    const { repo, base } = makeRepo();
    gitIn(repo, ['checkout', '-q', '-b', 'corral/busy']);
    const wt = await createWorktree(repo, base, 'busy');
    writeFileSync(path.join(wt.dir, 'edit.txt'), 'two\n');
    const snapshot = await snapshotWorktree(wt);
    const result = await commitToBranch(snapshot, 'corral/busy', 'x\n', 'run-1');
    await snapshot.dispose();
    await removeWorktree(wt);
    expect(result.branch).toBe('corral/busy-run-1');
    expect(result.detour).toBe('branch corral/busy is checked out; the result is on branch corral/busy-run-1 instead');
    expect(gitIn(repo, ['rev-parse', 'corral/busy']).trim()).toBe(base);
    expect(gitIn(repo, ['status', '--porcelain']).trim()).toBe('');
  });

  it('runs no hook of the repository', async () => {
    const { repo, base } = makeRepo();
    const marker = path.join(tempDir('corral-hook-'), 'ran');
    writeFileSync(path.join(repo, '.git', 'hooks', 'post-checkout'), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    gitIn(repo, ['config', 'core.fsmonitor', `touch ${marker}`]);
    const wt = await createWorktree(repo, base, 'hooks');
    writeFileSync(path.join(wt.dir, 'edit.txt'), 'two\n');
    const snapshot = await snapshotWorktree(wt);
    await listChanges(snapshot);
    await commitToBranch(snapshot, 'corral/hooks', 'x\n', 'x');
    await snapshot.dispose();
    await removeWorktree(wt);
    expect(() => readFileSync(marker)).toThrow();
  });
});
