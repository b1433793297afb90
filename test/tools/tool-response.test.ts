import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/bash.js';
import { editTool } from '../../src/tools/edit.js';
import { globTool } from '../../src/tools/glob.js';
import { grepTool } from '../../src/tools/grep.js';
import { readTool } from '../../src/tools/read.js';
import { structuredPatch } from '../../src/tools/structured-patch.js';
import { writeTool } from '../../src/tools/write.js';
import { makeContext, makeTempDir } from './helpers.js';

// Each tool's result as Claude Code gives it to PostToolUse hooks (`tool_response`), so
// a hook written for it reads the same fields.

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

describe("each tool's own tool_response", () => {
  it('Bash: stdout and stderr apart, interrupted, isImage', async () => {
    const out = await bashTool.execute({ command: 'echo out; echo err >&2' }, makeContext(dir));
    expect(out.content).toContain('out');
    expect(out.response).toEqual({ stdout: 'out\n', stderr: 'err\n', interrupted: false, isImage: false });
    const killed = await bashTool.execute({ command: 'sleep 5', timeout: 200 }, makeContext(dir));
    expect(killed.response).toMatchObject({ interrupted: true });
  });

  it('Write: create, then update with the original file and a patch; paths absolute', async () => {
    const created = await writeTool.execute({ file_path: 'a.txt', content: 'one\ntwo\n' }, makeContext(dir));
    expect(created.response).toEqual({ type: 'create', filePath: path.join(dir, 'a.txt'), content: 'one\ntwo\n', structuredPatch: [], originalFile: null });
    const updated = await writeTool.execute({ file_path: 'a.txt', content: 'one\n2\n' }, makeContext(dir));
    expect(updated.response).toEqual({
      type: 'update',
      filePath: path.join(dir, 'a.txt'),
      content: 'one\n2\n',
      structuredPatch: [{ oldStart: 1, oldLines: 2, newStart: 1, newLines: 2, lines: [' one', '-two', '+2'] }],
      originalFile: 'one\ntwo\n',
    });
  });

  it('Edit: filePath, oldString, newString, originalFile, structuredPatch, userModified, replaceAll', async () => {
    await writeFile(path.join(dir, 'b.js'), 'let a = 1;\n');
    const out = await editTool.execute({ file_path: 'b.js', old_string: '1', new_string: '2' }, makeContext(dir));
    expect(out.response).toEqual({
      filePath: path.join(dir, 'b.js'),
      oldString: '1',
      newString: '2',
      originalFile: 'let a = 1;\n',
      structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, lines: ['-let a = 1;', '+let a = 2;'] }],
      userModified: false,
      replaceAll: false,
    });
  });

  it('Read: type text and the file with its lines, unnumbered', async () => {
    await writeFile(path.join(dir, 'c.txt'), 'x\ny\nz\n');
    const out = await readTool.execute({ file_path: 'c.txt', offset: 2 }, makeContext(dir));
    expect(out.response).toEqual({ type: 'text', file: { filePath: path.join(dir, 'c.txt'), content: 'y\nz', numLines: 2, startLine: 2, totalLines: 3 } });
  });

  it('Glob and Grep: filenames, counts and mode', async () => {
    await writeFile(path.join(dir, 'd.ts'), 'needle\nneedle\n');
    const glob = await globTool.execute({ pattern: '*.ts' }, makeContext(dir));
    expect(glob.response).toMatchObject({ filenames: [path.join(dir, 'd.ts')], numFiles: 1, truncated: false });
    const files = await grepTool.execute({ pattern: 'needle' }, makeContext(dir));
    expect(files.response).toEqual({ mode: 'files_with_matches', filenames: ['d.ts'], numFiles: 1 });
    const count = await grepTool.execute({ pattern: 'needle', output_mode: 'count' }, makeContext(dir));
    expect(count.response).toMatchObject({ mode: 'count', numFiles: 1, numMatches: 2 });
    const content = await grepTool.execute({ pattern: 'needle', output_mode: 'content' }, makeContext(dir));
    expect(content.response).toMatchObject({ mode: 'content', numFiles: 1, numLines: 2 });
  });

  it('structuredPatch keeps three lines of context and marks an empty side like a unified diff', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\n';
    expect(structuredPatch(before, 'a\nb\nc\nd\nE\nf\ng\n')).toEqual([{ oldStart: 2, oldLines: 6, newStart: 2, newLines: 6, lines: [' b', ' c', ' d', '-e', '+E', ' f', ' g'] }]);
    expect(structuredPatch('', 'new\n')).toEqual([{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: ['+new'] }]);
    expect(structuredPatch('same', 'same')).toEqual([]);
  });
});
