import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { withWorktreeLock } from '../../src/workspace/worktree-lock.js';
import { createWorktree, removeWorktree } from '../../src/workspace/worktree.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

const LOCK = (repo: string) => path.join(repo, '.git', 'corral-worktrees.lock');

describe('the worktree lock of a repository', () => {
  it('lets one holder in at a time within a process', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' });
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        withWorktreeLock(repo, async () => {
          inside++;
          most = Math.max(most, inside);
          await new Promise((resolve) => setTimeout(resolve, 10));
          inside--;
        }),
      ),
    );
    expect(most).toBe(1);
    expect(existsSync(LOCK(repo))).toBe(false);
  });

  it('waits for another process that holds it, and takes over one left by a dead process', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' });
    const module = path.join(PROJECT_ROOT, 'dist/workspace/worktree-lock.js');
    const holder = spawn('node', ['--input-type=module', '-e', `const { withWorktreeLock } = await import(${JSON.stringify(module)}); await withWorktreeLock(process.argv[1], async () => { console.log('held'); await new Promise((r) => setTimeout(r, 400)); console.log('released'); });`, repo], { stdio: ['ignore', 'pipe', 'inherit'] });
    // Listened for from the start: the holder may well be gone before the lock is ours.
    const closed = new Promise((resolve) => holder.on('close', resolve));
    let said = '';
    await new Promise<void>((resolve) => holder.stdout.on('data', (chunk: Buffer) => ((said += chunk.toString()), said.includes('held') && resolve())));
    await withWorktreeLock(repo, async () => {
      // Only once the other process has let go.
      expect(said).toContain('released');
    });
    await closed;

    // A killed corral's lock (its pid is gone) does not block the next run.
    writeFileSync(LOCK(repo), `999999999 ${(await import('node:os')).hostname()}\n`);
    let ran = false;
    await withWorktreeLock(repo, async () => {
      ran = true;
    });
    expect(ran).toBe(true);
  });

  it('keeps parallel worktree creation and removal of one repository from failing', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' });
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const worktrees = await Promise.all(Array.from({ length: 8 }, (_, i) => createWorktree(repo, base, `par-${i}`)));
    expect(new Set(worktrees.map((w) => w.dir)).size).toBe(8);
    await Promise.all(worktrees.map((w) => removeWorktree(w)));
    expect(gitIn(repo, ['worktree', 'list', '--porcelain']).match(/^worktree /gm)).toHaveLength(1);
  });
});
