import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { discoverTickets } from '../../src/ticket/discover.js';
import { makeTempDir, writeFiles } from './temp-repo.js';

describe('discoverTickets', () => {
  it('finds YAML tickets and front-matter Markdown recursively, sorted, skipping the rest', async () => {
    const dir = makeTempDir();
    writeFiles(dir, {
      'b.yaml': '',
      'a.yml': '',
      'README.md': '# not a ticket\n',
      'notes.md': 'text\n---\n',
      'c.md': '---\ntask: x\n---\n',
      'crlf.md': '---\r\ntask: x\r\n---\r\n',
      'notes.txt': '',
      'sub/d.yaml': '',
      'sub/deeper/e.md': '---  \n---\nbody\n',
      'node_modules/pkg/f.yaml': '',
      '.hidden/g.yaml': '',
      'sub/.git/h.yaml': '',
    });

    expect(await discoverTickets([dir])).toEqual(
      ['a.yml', 'b.yaml', 'c.md', 'crlf.md', 'sub/d.yaml', 'sub/deeper/e.md'].map((f) => path.join(dir, f)),
    );
  });

  it('takes files as given whatever their extension, and returns each file once', async () => {
    const dir = makeTempDir();
    writeFiles(dir, { 'x/one.yaml': '', 'x/two.txt': '', 'x/README.md': '# readme\n' });
    const rel = path.relative(process.cwd(), dir);

    const found = await discoverTickets([
      path.join(rel, 'x/two.txt'),
      path.join(dir, 'x'),
      `./${path.join(rel, 'x/one.yaml')}`,
      path.join(rel, 'x/README.md'),
    ]);

    expect(found).toEqual(
      [path.join(rel, 'x/README.md'), path.join(rel, 'x/two.txt'), path.join(dir, 'x/one.yaml')].sort(),
    );
  });

  it('does not follow symlinked directories but takes symlinked files', async () => {
    const dir = makeTempDir();
    writeFiles(dir, { 'real/a.yaml': '', 'other/b.yaml': '' });
    fs.symlinkSync(path.join(dir, 'other'), path.join(dir, 'real/linked-dir'));
    fs.symlinkSync(path.join(dir, 'other/b.yaml'), path.join(dir, 'real/linked.yaml'));

    expect(await discoverTickets([path.join(dir, 'real')])).toEqual([
      path.join(dir, 'real/a.yaml'),
      path.join(dir, 'real/linked.yaml'),
    ]);
  });

  it('throws a UsageError naming every missing path', async () => {
    const dir = makeTempDir();
    const missing = [path.join(dir, 'nope.yaml'), path.join(dir, 'gone')];

    const error = await discoverTickets([dir, ...missing]).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toBe(`no such file or directory: ${missing.join(', ')}`);
  });
});
