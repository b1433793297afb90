import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { editTool } from '../../src/tools/edit.js';
import { makeContext, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

const file = (): string => path.join(dir, 'fees.js');

describe('Edit', () => {
  test('replaces one exact occurrence', async () => {
    await writeFile(file(), 'function fee() {\n  return 0;\n}\n');
    const out = await editTool.execute({ file_path: 'fees.js', old_string: 'return 0;', new_string: 'return days;' }, makeContext(dir));
    expect(out).toMatchObject({ content: 'Replaced 1 occurrence in fees.js.', isError: false });
    expect(await readFile(file(), 'utf8')).toBe('function fee() {\n  return days;\n}\n');
  });

  test('keeps $ patterns in new_string literal', async () => {
    await writeFile(file(), 'price = X;\n');
    await editTool.execute({ file_path: 'fees.js', old_string: 'X', new_string: "'$&$1$$'" }, makeContext(dir));
    expect(await readFile(file(), 'utf8')).toBe("price = '$&$1$$';\n");
  });

  test('several occurrences need replace_all, and the error says how many', async () => {
    await writeFile(file(), 'a a a\n');
    const refused = await editTool.execute({ file_path: 'fees.js', old_string: 'a', new_string: 'b' }, makeContext(dir));
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain('occurs 3 times');
    expect(await readFile(file(), 'utf8')).toBe('a a a\n');

    const done = await editTool.execute({ file_path: 'fees.js', old_string: 'a', new_string: 'b', replace_all: true }, makeContext(dir));
    expect(done).toMatchObject({ content: 'Replaced 3 occurrences in fees.js.', isError: false });
    expect(await readFile(file(), 'utf8')).toBe('b b b\n');
  });

  test('text that is not there is an error', async () => {
    await writeFile(file(), 'hello\n');
    const out = await editTool.execute({ file_path: 'fees.js', old_string: 'goodbye', new_string: 'x' }, makeContext(dir));
    expect(out.isError).toBe(true);
    expect(out.content).toContain('not found');
  });

  test('an empty old_string or one equal to new_string is an error', async () => {
    await writeFile(file(), 'hello\n');
    const empty = await editTool.execute({ file_path: 'fees.js', old_string: '', new_string: 'x' }, makeContext(dir));
    expect(empty.isError).toBe(true);
    expect(empty.content).toContain('old_string is empty');
    const same = await editTool.execute({ file_path: 'fees.js', old_string: 'hello', new_string: 'hello' }, makeContext(dir));
    expect(same.isError).toBe(true);
    expect(same.content).toContain('the same');
  });

  test('a missing file or a directory is an error', async () => {
    const missing = await editTool.execute({ file_path: 'nope.js', old_string: 'a', new_string: 'b' }, makeContext(dir));
    expect(missing).toMatchObject({ content: 'File does not exist: nope.js', isError: true });
    await mkdir(path.join(dir, 'src'));
    const directory = await editTool.execute({ file_path: 'src', old_string: 'a', new_string: 'b' }, makeContext(dir));
    expect(directory.isError).toBe(true);
  });

  test('resolves its file path as it opens it, and is kind edit', () => {
    expect(editTool.locations({ file_path: 'x.js', old_string: 'a', new_string: 'b' }, '/w')).toEqual([{ given: 'x.js', path: '/w/x.js', access: 'write', recursive: false, label: 'Edit file_path' }]);
    expect(editTool.kind).toBe('edit');
  });
});
