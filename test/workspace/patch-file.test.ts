import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findAddedSecrets } from '../../src/text/redact.js';
import { snapshotWorktree } from '../../src/workspace/changes.js';
import { diffSnapshot } from '../../src/workspace/keep.js';
import { redactPatchFileSync, writePatch } from '../../src/workspace/patch-file.js';
import { createWorktree, removeWorktree } from '../../src/workspace/worktree.js';
import { gitIn, repoWithFiles, tempDir } from '../support/repo.js';

// The patch is read a window at a time (4 MB, each with the last 64 KB of the one before),
// never whole: what it finds and how it redacts must be what a reading of the whole would give.

/** Secret-looking strings are assembled at run time, so no scanner flags this file. */
const join = (...parts: string[]) => parts.join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function noise(length: number, seed: number): string {
  let state = seed >>> 0;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out += ALNUM[state % ALNUM.length];
  }
  return out;
}

const WINDOW = 4 << 20;

/** A patch of one added file of many short lines, with `lines` placed at byte offsets near `at` (each a full added line). */
function bigPatch(inserts: Array<{ at: number; line: string }>, totalBytes: number): Buffer {
  const head = 'diff --git a/big.txt b/big.txt\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,99999 @@\n';
  const parts: string[] = [head];
  let size = head.length;
  const pending = [...inserts].sort((a, b) => a.at - b.at);
  let n = 0;
  while (size < totalBytes) {
    const next = pending[0];
    const line = next !== undefined && size + 40 >= next.at ? (pending.shift(), `+${next.line}\n`) : `+filler line ${String(n++).padStart(12, '0')} ok\n`;
    parts.push(line);
    size += line.length;
  }
  return Buffer.from(parts.join(''), 'latin1');
}

/** A binary file's patch of more than two windows, then a text file's hunk adding `TOKEN=<token>`. */
function afterBinary(token: string): Buffer {
  const base85 = `M${'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_\`{|}~'.repeat(1).slice(0, 65)}\n`;
  const head = 'diff --git a/blob.bin b/blob.bin\nnew file mode 100644\nindex 0000000..1111111\nGIT binary patch\nliteral 99999999\n';
  const binary = base85.repeat(Math.ceil((WINDOW * 2 + 999) / base85.length));
  const text = `\nliteral 0\nHcmV?d00001\n\ndiff --git a/app.env b/app.env\nindex 1111111..2222222 100644\n--- a/app.env\n+++ b/app.env\n@@ -1 +1,2 @@\n NAME=app\n+TOKEN=${token}\n`;
  return Buffer.from(head + binary + text, 'latin1');
}

describe('the patch read in windows', () => {
  const token = join('gl', 'pat-', noise(20, 7));
  const value = join('v4lue-', noise(30, 11));
  const secrets = [{ name: 'SERVICE_API_KEY', value }];

  it('finds and redacts exactly what a whole reading does, a secret across a window edge included', () => {
    const dir = tempDir('corral-patch-windows-');
    for (const [name, inserts] of Object.entries({
      // Across the first window's edge, and across where the overlap starts.
      edge: [{ at: WINDOW - 10, line: `TOKEN=${token}` }, { at: WINDOW - (64 << 10) - 5, line: `KEY=${value}` }],
      // Only in the second window, with the variable's value early in the first.
      late: [{ at: 1000, line: `OLD=${value}` }, { at: WINDOW + 300_000, line: `TOKEN=${token}` }],
      none: [],
      // After a binary file's windows of base85 (read as bytes only), a hunk's added secret.
      'after-binary': [],
    })) {
      const bytes = name === 'after-binary' ? afterBinary(token) : bigPatch(inserts, WINDOW * 2 + 12_345);
      const file = path.join(dir, `${name}.diff`);
      writeFileSync(file, bytes);
      const whole = findAddedSecrets(bytes, secrets);
      const found = redactPatchFileSync(file, secrets);
      expect(found.sort(), name).toEqual([...(whole?.added ?? [])].sort());
      expect(readFileSync(file).equals(whole ? whole.redacted : bytes), name).toBe(true);
      if (inserts.length > 0 || name === 'after-binary') expect(readFileSync(file, 'latin1'), name).not.toContain(token);
      if (name === 'after-binary') expect(found).toEqual(['gitlab-pat']);
    }
  });

  it('writes the patch of a worktree straight to its file, complete, leaving no temp file', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-patch-file-');
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const wt = await createWorktree(repo, base, 'patch-file');
    try {
      writeFileSync(path.join(wt.dir, 'a.txt'), `changed\nTOKEN=${token}\n`);
      writeFileSync(path.join(wt.dir, 'big.bin'), Buffer.alloc(3 << 20, 7));
      const out = tempDir('corral-patch-out-');
      const snapshot = await snapshotWorktree(wt);
      try {
        const written = await writePatch({ cwd: wt.dir, env: snapshot.env, baseCommit: base }, path.join(out, 'patch.diff'), secrets);
        expect(written.secretsAdded).toEqual(['gitlab-pat']);
        expect(readFileSync(written.file).equals(findAddedSecrets(await diffSnapshot(snapshot), secrets)!.redacted)).toBe(true);
        expect(readdirSync(out)).toEqual(['patch.diff']);
        // A patch that cannot be made leaves nothing behind, not a file cut short.
        await expect(writePatch({ cwd: wt.dir, env: snapshot.env, baseCommit: 'f'.repeat(40) }, path.join(out, 'bad.diff'), secrets)).rejects.toThrow();
        expect(existsSync(path.join(out, 'bad.diff'))).toBe(false);
        expect(readdirSync(out)).toEqual(['patch.diff']);
      } finally {
        await snapshot.dispose();
      }
    } finally {
      await removeWorktree(wt);
    }
  });

  it('keeps memory flat however large the change: a 64 MB binary file adds far less than its patch to the peak', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-patch-memory-');
    const base = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    const wt = await createWorktree(repo, base, 'patch-memory');
    try {
      // Made by another process, so this one's peak does not grow with it; random, so git cannot shrink it.
      execFileSync('sh', ['-c', 'head -c 67108864 /dev/urandom > big.bin'], { cwd: wt.dir });
      const out = tempDir('corral-patch-out-');
      const snapshot = await snapshotWorktree(wt);
      try {
        const peakBefore = process.resourceUsage().maxRSS * 1024;
        const written = await writePatch({ cwd: wt.dir, env: snapshot.env, baseCommit: base }, path.join(out, 'patch.diff'), secrets);
        const grew = process.resourceUsage().maxRSS * 1024 - peakBefore;
        const size = statSync(written.file).size;
        expect(size).toBeGreaterThan(64 << 20);
        // Holding the patch whole (as bytes, then as text) would add at least twice its size.
        expect(grew).toBeLessThan(size / 2);
      } finally {
        await snapshot.dispose();
      }
    } finally {
      await removeWorktree(wt);
    }
  }, 120_000);
});
