import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { writeTool } from '../../src/tools/write.js';
import { makeContext, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

describe('Write', () => {
  test('creates the file and its parent directories', async () => {
    const out = await writeTool.execute({ file_path: 'src/deep/new.ts', content: 'export {};\n' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'Created src/deep/new.ts (11 bytes).', isError: false });
    expect(await readFile(path.join(dir, 'src/deep/new.ts'), 'utf8')).toBe('export {};\n');
  });

  test('overwrites an existing file', async () => {
    await writeFile(path.join(dir, 'a.txt'), 'old');
    const out = await writeTool.execute({ file_path: path.join(dir, 'a.txt'), content: 'né' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'Overwrote a.txt (3 bytes).', isError: false });
    expect(await readFile(path.join(dir, 'a.txt'), 'utf8')).toBe('né');
  });

  test('a directory in the way is an error', async () => {
    await mkdir(path.join(dir, 'src'));
    const out = await writeTool.execute({ file_path: 'src', content: 'x' }, makeContext(dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('is a directory');
  });

  test('a file where a parent directory should be is an error', async () => {
    await writeFile(path.join(dir, 'plain'), 'x');
    const out = await writeTool.execute({ file_path: 'plain/child.txt', content: 'x' }, makeContext(dir));
    expect(out.isError).toBe(true);
  });

  test('resolves its file path as it opens it, and is kind edit', () => {
    expect(writeTool.locations({ file_path: 'a.txt', content: '' }, '/w')).toEqual([{ given: 'a.txt', path: '/w/a.txt', access: 'write', recursive: false, label: 'Write file_path' }]);
    expect(writeTool.kind).toBe('edit');
  });
});
