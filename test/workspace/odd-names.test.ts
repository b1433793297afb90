import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { listChanges, snapshotWorktree } from '../../src/workspace/changes.js';
import { checkFence } from '../../src/workspace/fence.js';
import { createWorktree, removeWorktree } from '../../src/workspace/worktree.js';
import { gitIn, tempDir } from '../support/repo.js';

// Names git would quote in a plain listing: a newline, a tab, a quote, a backslash, and
// a byte that is not UTF-8 (written as raw bytes).
const ODD_NAMES = ['a\nb.txt', 'tab\there.txt', 'quote"d.txt', 'back\\slash.txt'];
const LATIN1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]); // "caf\xe9.txt"

async function changesMadeIn(folder: string): Promise<{ paths: string[]; fenceOk: (allow: string[], forbid: string[]) => boolean }> {
  const repo = tempDir('corral-odd-');
  gitIn(repo, ['init', '-q']);
  mkdirSync(path.join(repo, 'src'));
  writeFileSync(path.join(repo, 'src', 'keep.txt'), 'keep\n');
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-qm', 'base']);
  const wt = await createWorktree(repo, gitIn(repo, ['rev-parse', 'HEAD']).trim(), 'odd');
  try {
    mkdirSync(path.join(wt.dir, folder), { recursive: true });
    for (const name of ODD_NAMES) writeFileSync(path.join(wt.dir, folder, name), 'agent\n');
    writeFileSync(Buffer.concat([Buffer.from(`${path.join(wt.dir, folder)}/`), LATIN1]), 'agent\n');
    const snapshot = await snapshotWorktree(wt);
    try {
      const changes = await listChanges(snapshot);
      return { paths: changes.map((c) => c.path), fenceOk: (allow, forbid) => checkFence(changes, allow, forbid).ok };
    } finally {
      await snapshot.dispose();
    }
  } finally {
    await removeWorktree(wt);
  }
}

describe('file names git quotes, on a real repository', () => {
  it('lists them whole and lets them through a fence that allows their folder', async () => {
    const { paths, fenceOk } = await changesMadeIn('src');
    expect(paths).toHaveLength(ODD_NAMES.length + 1);
    for (const name of ODD_NAMES) expect(paths).toContain(`src/${name}`);
    expect(fenceOk(['src/**'], [])).toBe(true);
    expect(fenceOk(['src/*'], [])).toBe(true);
    expect(fenceOk(['lib/**'], [])).toBe(false);
  });

  it('stops them in a forbidden folder', async () => {
    const { paths, fenceOk } = await changesMadeIn('src/secret/deep');
    for (const name of ODD_NAMES) expect(paths).toContain(`src/secret/deep/${name}`);
    expect(fenceOk(['src/**'], ['src/secret/**'])).toBe(false);
    expect(fenceOk(['**'], ['**/deep/**'])).toBe(false);
    expect(fenceOk(['src/**'], [])).toBe(true);
  });
});
