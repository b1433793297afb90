import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { listWorktrees } from '../../src/git/git.js';
import { makeRepo, makeTempDir, runGit } from '../ticket/temp-repo.js';

// Its own file: listWorktrees remembers, per process, that git took no -z.

const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
const savedPath = process.env.PATH;
afterEach(() => {
  process.env.PATH = savedPath;
});

describe('listWorktrees on a git before 2.36', () => {
  it('lists the worktrees without -z when git refuses it', async () => {
    const repo = makeRepo();
    const linked = path.join(makeTempDir(), 'linked');
    runGit(repo, ['worktree', 'add', '-q', '--detach', '--lock', '--reason', 'corral pid=1 host=h', linked]);
    // A git that answers `worktree list -z` as git 2.35 does, and runs the real one otherwise.
    const shim = path.join(makeTempDir(), 'bin');
    const log = path.join(shim, 'calls');
    mkdirSync(shim);
    writeFileSync(
      path.join(shim, 'git'),
      `#!/bin/sh\necho "$*" >> '${log}'\ncase " $* " in *" worktree list "*" -z "*) echo "error: unknown switch \\\`z'" >&2; exit 129;; esac\nexec '${realGit}' "$@"\n`,
      { mode: 0o755 },
    );
    process.env.PATH = `${shim}:${savedPath}`;
    for (let round = 0; round < 2; round += 1) {
      const listed = await listWorktrees(repo);
      expect(listed.map(({ dir, locked }) => ({ dir, locked }))).toEqual([
        { dir: repo, locked: null },
        { dir: linked, locked: 'corral pid=1 host=h' },
      ]);
    }
    // -z was tried once, then no more.
    expect(readFileSync(log, 'utf8').split('\n').filter((line) => / worktree list /.test(` ${line} `) && / -z$/.test(line))).toHaveLength(1);
  });
});
