import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { globTool, patternLeavesRoot } from '../../src/tools/glob.js';
import { makeContext, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

/** Writes a file with a given modification time (seconds since the epoch). */
async function put(relative: string, mtime: number): Promise<void> {
  const file = path.join(dir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, relative);
  await utimes(file, mtime, mtime);
}

describe('Glob', () => {
  test('lists matches newest first, relative to the worktree, with dot files and without .git', async () => {
    await put('src/old.ts', 1_000);
    await put('src/new.ts', 3_000);
    await put('src/lib/mid.ts', 2_000);
    await put('.config/hidden.ts', 1_500);
    await put('.git/objects/x.ts', 4_000);
    await put('readme.md', 5_000);
    const out = await globTool.execute({ pattern: '**/*.ts' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'src/new.ts\nsrc/lib/mid.ts\n.config/hidden.ts\nsrc/old.ts', isError: false });
  });

  test('searches under path, still answering relative to the worktree', async () => {
    await put('src/a.ts', 1_000);
    await put('test/a.ts', 1_000);
    const out = await globTool.execute({ pattern: '*.ts', path: 'src' }, makeContext(dir));
    expect(out.content).toBe('src/a.ts');
  });

  test('no match is not an error', async () => {
    const out = await globTool.execute({ pattern: '**/*.rs' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'No files match **/*.rs in the repository root.', isError: false });
  });

  test('caps the list at 1000 with a note', async () => {
    await mkdir(path.join(dir, 'many'));
    await Promise.all(Array.from({ length: 1005 }, (_, i) => writeFile(path.join(dir, 'many', `f${i}.txt`), '')));
    const out = await globTool.execute({ pattern: 'many/*.txt' }, makeContext(dir, { outputCap: 1_000_000 }));
    const lines = out.content.split('\n');
    expect(lines.filter((line) => line.startsWith('many/'))).toHaveLength(1000);
    expect(out.content).toContain('Showing the 1000 most recently modified of 1005 files');
  });

  test('a missing path or a file as path is an error', async () => {
    await put('a.ts', 1_000);
    expect(await globTool.execute({ pattern: '*', path: 'nope' }, makeContext(dir))).toMatchObject({ content: 'Path does not exist: nope', isError: true });
    const file = await globTool.execute({ pattern: '*', path: 'a.ts' }, makeContext(dir));
    expect(file.isError).toBe(true);
  });

  test('resolves its path from the worktree root, as it walks it', () => {
    expect(globTool.locations({ pattern: '*' }, '/w')).toEqual([{ given: '.', path: '/w', access: 'list', recursive: true, label: 'Glob path' }]);
    expect(globTool.locations({ pattern: '*', path: 'src/../lib' }, '/w').map((l) => l.path)).toEqual(['/w/lib']);
    expect(globTool.kind).toBe('search');
  });
});

describe('Glob patterns that leave the search path', () => {
  test('are refused before anything is listed', async () => {
    for (const bad of ['/etc/*', '../*', 'a/../../*', '{src,..}/*', '~/x', '**/../../*']) expect(patternLeavesRoot(bad)).toBe(true);
    for (const ok of ['**/*.ts', 'src/*.{js,ts}', '.hidden/*', 'a..b/*']) expect(patternLeavesRoot(ok)).toBe(false);
    const out = await globTool.execute({ pattern: '../*' }, makeContext(dir));
    expect(out.isError).toBe(true);
  });
});
