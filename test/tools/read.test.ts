import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { readTool } from '../../src/tools/read.js';
import { makeContext, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

const lines = (count: number): string => Array.from({ length: count }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

describe('Read', () => {
  test('numbers lines like cat -n, relative to the worktree', async () => {
    await writeFile(path.join(dir, 'a.txt'), 'first\r\nsecond\n\tthird');
    const out = await readTool.execute({ file_path: 'a.txt' }, makeContext(dir));
    expect(out).toMatchObject({ content: '     1\tfirst\n     2\tsecond\n     3\t\tthird', isError: false });
  });

  test('takes absolute paths as they are', async () => {
    const file = path.join(dir, 'abs.txt');
    await writeFile(file, 'x\n');
    const out = await readTool.execute({ file_path: file }, makeContext(path.join(dir, 'elsewhere')));
    expect(out.content).toBe('     1\tx');
  });

  test('offset and limit pick a range and say where to read on', async () => {
    await writeFile(path.join(dir, 'long.txt'), lines(10));
    const out = await readTool.execute({ file_path: 'long.txt', offset: 3, limit: 2 }, makeContext(dir));
    expect(out.content).toBe('     3\tline 3\n     4\tline 4\n\n[More lines follow; read on with offset 5.]');
  });

  test('reads at most 2000 lines by default', async () => {
    await writeFile(path.join(dir, 'big.txt'), lines(2500));
    const out = await readTool.execute({ file_path: 'big.txt' }, makeContext(dir, { outputCap: 1_000_000 }));
    expect(out.content).toContain('  2000\tline 2000\n');
    expect(out.content).not.toContain('line 2001');
    expect(out.content).toContain('offset 2001');
  });

  test('cuts lines longer than 2000 characters', async () => {
    await writeFile(path.join(dir, 'wide.txt'), `${'x'.repeat(5000)}\nshort\n`);
    const out = await readTool.execute({ file_path: 'wide.txt' }, makeContext(dir));
    const [first, second] = out.content.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2000)}`);
    expect(second).toBe('     2\tshort');
    expect(out.content).toContain('longer than 2000 characters were cut');
  });

  test('an empty file and an offset past the end say so', async () => {
    await writeFile(path.join(dir, 'empty.txt'), '');
    await writeFile(path.join(dir, 'three.txt'), lines(3));
    expect((await readTool.execute({ file_path: 'empty.txt' }, makeContext(dir))).content).toBe('(empty.txt is empty)');
    const past = await readTool.execute({ file_path: 'three.txt', offset: 9 }, makeContext(dir));
    expect(past).toMatchObject({ content: '(three.txt has 3 lines; offset 9 is past the end)', isError: false });
  });

  test('a missing file is an error', async () => {
    const out = await readTool.execute({ file_path: 'nope.txt' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'File does not exist: nope.txt', isError: true });
  });

  test('a directory is an error', async () => {
    await mkdir(path.join(dir, 'src'));
    const out = await readTool.execute({ file_path: 'src' }, makeContext(dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('is a directory');
  });

  test('a binary file is an error', async () => {
    await writeFile(path.join(dir, 'blob.bin'), Buffer.from([0x50, 0x4b, 0x00, 0x01]));
    const out = await readTool.execute({ file_path: 'blob.bin' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'blob.bin is a binary file; Read only shows text.', isError: true });
  });

  test('a file over 10 MB needs offset or limit, and then reads only the range', async () => {
    const file = path.join(dir, 'huge.txt');
    const handle = await open(file, 'w');
    await handle.write(lines(1000));
    // Grow it to 11 MB without writing: a sparse run of NUL bytes after the text, which is
    // past the 8 KB the binary check looks at, and one enormous last "line".
    await handle.truncate(11 * 1024 * 1024);
    await handle.close();
    const whole = await readTool.execute({ file_path: 'huge.txt' }, makeContext(dir));
    expect(whole.isError).toBe(true);
    expect(whole.content).toContain('too large to read whole');

    const range = await readTool.execute({ file_path: 'huge.txt', offset: 999, limit: 2 }, makeContext(dir));
    expect(range).toMatchObject({ content: '   999\tline 999\n  1000\tline 1000\n\n[More lines follow; read on with offset 1001.]', isError: false });
    const giant = await readTool.execute({ file_path: 'huge.txt', offset: 1001 }, makeContext(dir));
    expect(giant.content.split('\n')[0]).toBe(`  1001\t${'\0'.repeat(2000)}`);
  });

  test('the result is capped', async () => {
    await writeFile(path.join(dir, 'many.txt'), lines(1000));
    const out = await readTool.execute({ file_path: 'many.txt' }, makeContext(dir, { outputCap: 200 }));
    expect(out.content).toMatch(/\[\.\.\. \d+ bytes cut \.\.\.\]/);
  });

  test('resolves its file path as it opens it, and is kind read', () => {
    expect(readTool.locations({ file_path: 'src/a.ts' }, '/w')).toEqual([{ given: 'src/a.ts', path: '/w/src/a.ts', access: 'read', recursive: false, label: 'Read file_path' }]);
    // An absolute path is taken as is, `..` cleaned as the tool cleans it before it opens the file.
    expect(readTool.locations({ file_path: '/etc/../etc/passwd' }, '/w')[0]!.path).toBe('/etc/passwd');
    expect(readTool.kind).toBe('read');
  });
});
