import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorIgnorePatterns, listChanges, snapshotWorktree } from '../../src/workspace/changes.js';
import { type Change } from '../../src/trace/records.js';
import { commitToBranch, diffSnapshot } from '../../src/workspace/keep.js';
import { createWorktree, removeWorktree, type Worktree } from '../../src/workspace/worktree.js';
import { gitIn, tempDir } from '../support/repo.js';

// The fence's snapshot must not believe anything of the worktree's own git state: code the
// agent wrote may have changed the worktree's index bits, its ignore files or its config.

function makeRepo(files: Record<string, string>): { repo: string; base: string } {
  const repo = tempDir('corral-untrusted-');
  gitIn(repo, ['init', '-q']);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    writeFileSync(path.join(repo, name), content);
  }
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-qm', 'base']);
  return { repo, base: gitIn(repo, ['rev-parse', 'HEAD']).trim() };
}

const BASE = {
  'src/a.txt': 'a\n',
  'lib/x.txt': 'x\n',
  'lib/y.txt': 'y\n',
  '.gitignore': 'build/\n*.log\n',
  'docs/.gitignore': '/generated\n!keep.log\n',
  'docs/readme.md': 'docs\n',
};

async function changesAfter(repo: string, base: string, act: (wt: Worktree) => void): Promise<Change[]> {
  const wt = await createWorktree(repo, base, 'untrusted');
  try {
    act(wt);
    const snapshot = await snapshotWorktree(wt);
    try {
      return (await listChanges(snapshot)).sort((a, b) => a.path.localeCompare(b.path));
    } finally {
      await snapshot.dispose();
    }
  } finally {
    await removeWorktree(wt);
  }
}

describe('the snapshot does not trust the worktree', () => {
  it('sees a change to a file marked skip-worktree or assume-unchanged in the worktree index', async () => {
    const { repo, base } = makeRepo(BASE);
    const changes = await changesAfter(repo, base, (wt) => {
      gitIn(wt.dir, ['update-index', '--skip-worktree', 'lib/x.txt']);
      gitIn(wt.dir, ['update-index', '--assume-unchanged', 'lib/y.txt']);
      writeFileSync(path.join(wt.dir, 'lib/x.txt'), 'X\n');
      writeFileSync(path.join(wt.dir, 'lib/y.txt'), 'Y\n');
      // The bits hide both from git's own view of the worktree.
      expect(gitIn(wt.dir, ['status', '--porcelain'])).toBe('');
    });
    expect(changes).toEqual([
      { kind: 'modified', path: 'lib/x.txt' },
      { kind: 'modified', path: 'lib/y.txt' },
    ]);
  });

  it('sees a file deleted under skip-worktree, and a mode change', async () => {
    const { repo, base } = makeRepo(BASE);
    const changes = await changesAfter(repo, base, (wt) => {
      gitIn(wt.dir, ['update-index', '--skip-worktree', 'lib/x.txt', 'lib/y.txt']);
      gitIn(wt.dir, ['rm', '-q', '--cached', 'src/a.txt']);
      // Deleted from the worktree but still in its index: only the base says it is gone.
      rmSync(path.join(wt.dir, 'lib/x.txt'));
      chmodSync(path.join(wt.dir, 'lib/y.txt'), 0o755);
    });
    expect(changes).toEqual([
      { kind: 'deleted', path: 'lib/x.txt' },
      { kind: 'mode', path: 'lib/y.txt' },
    ]);
  });

  it('judges new files by the base commit ignore rules only, whatever .gitignore and index the worktree has', async () => {
    const { repo, base } = makeRepo(BASE);
    const changes = await changesAfter(repo, base, (wt) => {
      // A new folder that hides itself.
      mkdirSync(path.join(wt.dir, 'lib/hidden'));
      writeFileSync(path.join(wt.dir, 'lib/hidden/.gitignore'), '*\n');
      writeFileSync(path.join(wt.dir, 'lib/hidden/payload.txt'), 'p\n');
      // An edited .gitignore that ignores a new file next to it, and one that is unchanged
      // but then ignored anew through the worktree's own exclude.
      writeFileSync(path.join(wt.dir, '.gitignore'), 'build/\n*.log\nlib/new.txt\n');
      writeFileSync(path.join(wt.dir, 'lib/new.txt'), 'n\n');
      // Ignored by the base's rules: never in the snapshot (build output, logs, anchored patterns).
      mkdirSync(path.join(wt.dir, 'build'));
      writeFileSync(path.join(wt.dir, 'build/out.js'), 'o\n');
      writeFileSync(path.join(wt.dir, 'src/debug.log'), 'l\n');
      mkdirSync(path.join(wt.dir, 'docs/generated'));
      writeFileSync(path.join(wt.dir, 'docs/generated/page.html'), 'g\n');
      // Re-included by the nested base .gitignore, and a pattern anchored to docs/ only.
      writeFileSync(path.join(wt.dir, 'docs/keep.log'), 'k\n');
      mkdirSync(path.join(wt.dir, 'src/generated'));
      writeFileSync(path.join(wt.dir, 'src/generated/page.html'), 'g\n');
    });
    expect(changes.map((c) => `${c.kind} ${c.path}`)).toEqual([
      'modified .gitignore',
      'added docs/keep.log',
      'added lib/hidden/.gitignore',
      'added lib/hidden/payload.txt',
      'added lib/new.txt',
      'added src/generated/page.html',
    ]);
  });

  it('honours the host info/exclude of the base, and names odd file names literally', async () => {
    const { repo, base } = makeRepo(BASE);
    writeFileSync(path.join(repo, '.git/info/exclude'), 'scratch/\n');
    const changes = await changesAfter(repo, base, (wt) => {
      mkdirSync(path.join(wt.dir, 'scratch'));
      writeFileSync(path.join(wt.dir, 'scratch/notes.txt'), 's\n');
      writeFileSync(path.join(wt.dir, ':(glob)*'), 'odd\n');
      writeFileSync(path.join(wt.dir, '*'), 'star\n');
    });
    expect(changes.map((c) => `${c.kind} ${c.path}`)).toEqual(['added :(glob)*', 'added *']);
  });

  it('runs no filter, fsmonitor or hook of the repository config, in the checkout, the snapshot, the patch and the branch', async () => {
    const { repo, base } = makeRepo({ ...BASE, '.gitattributes': '*.txt filter=mark\n*.md filter=a=b\n' });
    const markers = tempDir('corral-markers-');
    const script = path.join(markers, 'mark.sh');
    writeFileSync(script, `#!/bin/sh\ntouch "${markers}/ran-$1"\ncat\n`);
    chmodSync(script, 0o755);
    gitIn(repo, ['config', 'filter.mark.clean', `${script} clean`]);
    gitIn(repo, ['config', 'filter.mark.smudge', `${script} smudge`]);
    gitIn(repo, ['config', 'filter.mark.required', 'true']);
    // A driver named only in an included file, with a name git's -c could not carry.
    writeFileSync(path.join(repo, '.git/more.config'), `[filter "a=b"]\n\tprocess = ${script} process\n\trequired = true\n`);
    gitIn(repo, ['config', 'include.path', 'more.config']);
    gitIn(repo, ['config', 'core.fsmonitor', `${script} fsmonitor`]);
    rmMarkers(markers);
    const wt = await createWorktree(repo, base, 'filters');
    try {
      writeFileSync(path.join(wt.dir, 'src/a.txt'), 'changed\n');
      writeFileSync(path.join(wt.dir, 'docs/readme.md'), 'changed\n');
      writeFileSync(path.join(wt.dir, 'src/new.txt'), 'new\n');
      const snapshot = await snapshotWorktree(wt);
      try {
        expect((await listChanges(snapshot)).map((c) => c.path).sort()).toEqual(['docs/readme.md', 'src/a.txt', 'src/new.txt']);
        expect((await diffSnapshot(snapshot)).toString()).toContain('+changed');
        await commitToBranch(snapshot, 'corral/filters', 'm', 'x');
      } finally {
        await snapshot.dispose();
      }
    } finally {
      await removeWorktree(wt);
    }
    expect(readdirNames(markers)).toEqual(['mark.sh']);
  });
});

describe('anchorIgnorePatterns', () => {
  it('anchors a nested file patterns to its folder, at any depth unless they hold a slash', () => {
    expect(anchorIgnorePatterns('a/b', '# c\n\n*.o\n/top\nx/y\n!keep.o\nout/\n\\#h\n')).toBe(
      ['a/b/**/*.o', 'a/b/top', 'a/b/x/y', '!a/b/**/keep.o', 'a/b/**/out/', 'a/b/**/\\#h'].join('\n'),
    );
    expect(anchorIgnorePatterns('we*rd/#x', 'f')).toBe('we\\*rd/#x/**/f');
    expect(anchorIgnorePatterns('#d', 'f')).toBe('\\#d/**/f');
    expect(anchorIgnorePatterns('', '\uFEFF*.o\n')).toBe('*.o\n');
  });
});

function rmMarkers(dir: string): void {
  for (const name of readdirNames(dir)) if (name !== 'mark.sh') rmSync(path.join(dir, name));
}

function readdirNames(dir: string): string[] {
  return readdirSync(dir).sort();
}
