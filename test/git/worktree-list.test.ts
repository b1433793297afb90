import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listWorktrees, parseWorktreeList } from '../../src/git/git.js';
import { makeRepo, makeTempDir, runGit } from '../ticket/temp-repo.js';

describe('listWorktrees', () => {
  it("says each worktree's branch or detached commit, its lock reason and whether it is prunable, as git sees them", async () => {
    const repo = makeRepo();
    const head = runGit(repo, ['rev-parse', 'HEAD']).trim();
    const main = runGit(repo, ['symbolic-ref', 'HEAD']).trim();
    const parent = makeTempDir();
    const onBranch = path.join(parent, 'on-branch');
    const locked = path.join(parent, 'locked');
    const gone = path.join(parent, 'gone');
    runGit(repo, ['worktree', 'add', '-q', '-b', 'feature', onBranch]);
    runGit(repo, ['worktree', 'add', '-q', '--detach', '--lock', '--reason', 'corral pid=1 host=a b', locked]);
    runGit(repo, ['worktree', 'add', '-q', '--detach', gone]);
    rmSync(gone, { recursive: true, force: true });
    runGit(repo, ['pack-refs', '--all']);

    const base = { bare: false, head, locked: null, prunable: null };
    const [first, ...linked] = await listWorktrees(repo);
    // The main worktree first, the linked ones in git's order (by their entries' names).
    expect(first).toEqual({ ...base, dir: repo, branch: main });
    expect(linked.sort((a, b) => a.dir.localeCompare(b.dir))).toEqual([
      { ...base, dir: gone, branch: null, prunable: expect.stringMatching(/gitdir file points to non-existent location/) },
      { ...base, dir: locked, branch: null, locked: 'corral pid=1 host=a b' },
      { ...base, dir: onBranch, branch: 'refs/heads/feature' },
    ]);
    // Asked from a linked worktree, the same list.
    expect((await listWorktrees(onBranch)).map((worktree) => worktree.dir).sort()).toEqual([repo, onBranch, locked, gone].sort());
  });

  it('lists while another process adds and removes locked worktrees (git dies when an entry vanishes mid-read)', async () => {
    const repo = makeRepo();
    const parent = makeTempDir();
    // Another run's worktrees coming and going, as parallel shards make them.
    const churn = spawn('bash', ['-c', `while :; do for i in 1 2 3 4 5 6 7 8; do git worktree add -q --detach --lock --reason "corral pid=1 host=x" "$1/w$i" 2>/dev/null; done; for i in 1 2 3 4 5 6 7 8; do git worktree remove --force --force "$1/w$i" 2>/dev/null; done; done`, 'churn', parent], { cwd: repo, stdio: 'ignore' });
    try {
      for (let i = 0; i < 600; i++) {
        const listed = await listWorktrees(repo);
        expect(listed[0]?.dir).toBe(repo);
      }
    } finally {
      churn.kill('SIGKILL');
    }
  }, 120_000);

  it('reads a bare repository, a lock without a reason and a reason holding a newline', () => {
    const zeros = '0'.repeat(40);
    const out = ['worktree /r.git', 'bare', '', 'worktree /w', `HEAD ${zeros}`, 'branch refs/heads/unborn', 'locked', '', 'worktree /v', `HEAD ${zeros}`, 'detached', 'locked two\nlines', 'prunable gone', ''].join('\0') + '\0';
    expect(parseWorktreeList(out)).toEqual([
      { dir: '/r.git', bare: true, head: null, branch: null, locked: null, prunable: null },
      { dir: '/w', bare: false, head: zeros, branch: 'refs/heads/unborn', locked: '', prunable: null },
      { dir: '/v', bare: false, head: zeros, branch: null, locked: 'two\nlines', prunable: 'gone' },
    ]);
    expect(parseWorktreeList('')).toEqual([]);
  });
});

describe('parseWorktreeList without -z', () => {
  it('reads the line format of a git before 2.36 the same way', () => {
    const zeros = '0'.repeat(40);
    const lines = ['worktree /w', `HEAD ${zeros}`, 'branch refs/heads/main', '', 'worktree /v', `HEAD ${zeros}`, 'detached', 'locked corral pid=1 host=h', 'prunable gitdir file points to non-existent location', '', ''].join('\n');
    expect(parseWorktreeList(lines, '\n')).toEqual([
      { dir: '/w', bare: false, head: zeros, branch: 'refs/heads/main', locked: null, prunable: null },
      { dir: '/v', bare: false, head: zeros, branch: null, locked: 'corral pid=1 host=h', prunable: 'gitdir file points to non-existent location' },
    ]);
  });
});
