import { mkdir, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { grepTool, type GrepInput } from '../../src/tools/grep.js';
import { makeContext, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  await put('src/fees.js', 'function fee(days) {\n  return 0;\n}\n\nexport function late() {\n  return fee(3);\n}\n', 2_000);
  await put('src/util.ts', 'export const FEE = 1;\n', 3_000);
  await put('README.md', 'Fees are computed daily.\n', 1_000);
  await put('node_modules/dep/index.js', 'function fee() {}\n', 4_000);
  await put('.git/config', 'function fee\n', 4_000);
  await put('.github/ci.yml', 'run: fee\n', 500);
});
afterEach(() => cleanup());

async function put(relative: string, content: string | Buffer, mtime: number): Promise<void> {
  const file = path.join(dir, relative);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
  await utimes(file, mtime, mtime);
}

const grep = (input: GrepInput, outputCap = 30_000) => grepTool.execute(input, makeContext(dir, { outputCap }));

describe('Grep', () => {
  test('lists matching files by default, newest first, skipping .git and node_modules', async () => {
    const out = await grep({ pattern: 'fee' });
    expect(out).toMatchObject({ content: 'Found 2 files\nsrc/fees.js\n.github/ci.yml', isError: false });
  });

  test('-i ignores case', async () => {
    const out = await grep({ pattern: 'fee', '-i': true });
    expect(out.content).toBe('Found 4 files\nsrc/util.ts\nsrc/fees.js\nREADME.md\n.github/ci.yml');
  });

  test('content mode prints path:line:text', async () => {
    const out = await grep({ pattern: 'return', output_mode: 'content' });
    expect(out.content).toBe('src/fees.js:2:  return 0;\nsrc/fees.js:6:  return fee(3);');
  });

  test('content mode without line numbers', async () => {
    const out = await grep({ pattern: 'return 0', output_mode: 'content', '-n': false });
    expect(out.content).toBe('src/fees.js:  return 0;');
  });

  test('context lines use - and groups are separated by --', async () => {
    const out = await grep({ pattern: 'return', output_mode: 'content', '-B': 1, path: 'src/fees.js' });
    expect(out.content).toBe(
      ['src/fees.js-1-function fee(days) {', 'src/fees.js:2:  return 0;', '--', 'src/fees.js-5-export function late() {', 'src/fees.js:6:  return fee(3);'].join('\n'),
    );
    const merged = await grep({ pattern: 'return 0', output_mode: 'content', '-C': 1, path: 'src' });
    expect(merged.content).toBe('src/fees.js-1-function fee(days) {\nsrc/fees.js:2:  return 0;\nsrc/fees.js-3-}');
  });

  test('count mode counts matching lines per file', async () => {
    const out = await grep({ pattern: 'fee', output_mode: 'count', '-i': true, path: 'src' });
    expect(out.content).toBe('src/fees.js:2\nsrc/util.ts:1\n\nFound 3 matching lines in 2 files.');
  });

  test('glob filters by file name at any depth, or by path', async () => {
    expect((await grep({ pattern: 'fee', '-i': true, glob: '*.ts' })).content).toBe('Found 1 file\nsrc/util.ts');
    expect((await grep({ pattern: 'fee', '-i': true, glob: 'src/*.{js,md}' })).content).toBe('Found 1 file\nsrc/fees.js');
  });

  test('head_limit keeps the first entries and says more exist', async () => {
    const out = await grep({ pattern: 'fee', '-i': true, head_limit: 2 });
    expect(out.content).toBe('Found 4 files\nsrc/util.ts\nsrc/fees.js\n[Showing 2 of 4; raise head_limit to see more.]');
    const content = await grep({ pattern: '.', output_mode: 'content', path: 'src/fees.js', head_limit: 2 });
    expect(content.content).toBe('src/fees.js:1:function fee(days) {\nsrc/fees.js:2:  return 0;\n[Stopped at head_limit 2.]');
  });

  test('multiline lets a pattern span lines', async () => {
    const out = await grep({ pattern: 'return 0;\\s*\\}', multiline: true, output_mode: 'content' });
    expect(out.content).toBe('src/fees.js:2:  return 0;\nsrc/fees.js:3:}');
    expect((await grep({ pattern: 'return 0;\\s*\\}' })).content).toMatch(/^No matches/);
  });

  test('binary and oversized files are skipped', async () => {
    await put('blob.bin', Buffer.concat([Buffer.from('fee'), Buffer.from([0, 1, 2])]), 9_000);
    await put('big.txt', `fee\n${'x'.repeat(5 * 1024 * 1024)}`, 9_000);
    const out = await grep({ pattern: 'fee', glob: '*.{bin,txt}' });
    expect(out).toMatchObject({ content: 'No matches for fee in the repository root (2 binary or oversized files were skipped).', isError: false });
  });

  test('an invalid regex is an error', async () => {
    const out = await grep({ pattern: 'fee(' });
    expect(out.isError).toBe(true);
    expect(out.content).toContain('Invalid regular expression');
  });

  test('a missing path is an error', async () => {
    expect(await grep({ pattern: 'x', path: 'nope' })).toMatchObject({ content: 'Path does not exist: nope', isError: true });
  });

  test('content output is capped', async () => {
    await put('lots.txt', 'fee fee fee fee\n'.repeat(10_000), 1);
    const out = await grep({ pattern: 'fee', output_mode: 'content', path: 'lots.txt' }, 1_000);
    expect(out.content).toMatch(/\[\.\.\. \d+ bytes cut \.\.\.\]/);
    expect(out.content.length).toBeLessThan(1_100);
  });

  test('resolves its path from the worktree root, as it walks it', () => {
    expect(grepTool.locations({ pattern: 'x' }, '/w')).toEqual([{ given: '.', path: '/w', access: 'read', recursive: true, label: 'Grep tool path (skips secret files)' }]);
    expect(grepTool.locations({ pattern: 'x', path: 'src', glob: '*.env' }, '/w')).toMatchObject([{ path: '/w/src', filter: '*.env' }]);
    expect(grepTool.kind).toBe('search');
  });
});
