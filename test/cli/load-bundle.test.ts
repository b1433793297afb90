import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

const LOADER = path.join(PROJECT_ROOT, 'bin/load-bundle.cjs');

// Each case runs the loader in its own Node process, as the CLI does: whether V8 takes a
// cache can only be seen from a process that did not make it.
describe('bin/load-bundle.cjs', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'corral-load-bundle-'));
    writeFileSync(
      path.join(dir, 'entry.cjs'),
      [
        'const other = require("./other.cjs");',
        'const again = require("./other.cjs");',
        'const { EOL } = require("node:os");',
        'exports.answer = () => `${other.twice(21)}:${other === again}:${JSON.stringify(EOL)}:${typeof exports}`;',
        'exports.later = () => Promise.resolve().then(() => require("./late.cjs")).then((late) => late.word);',
      ].join('\n'),
    );
    writeFileSync(path.join(dir, 'other.cjs'), 'exports.twice = (n) => n * 2;\n');
    writeFileSync(path.join(dir, 'late.cjs'), 'exports.word = "late";\n');
    writeFileSync(
      path.join(dir, 'main.cjs'),
      [
        `const { createBundleLoader } = require(${JSON.stringify(LOADER)});`,
        'const path = require("node:path");',
        // V8 flags given as arguments are set first, as bin/corral.cjs sets its own.
        'for (const flags of process.argv.slice(2)) require("node:v8").setFlagsFromString(flags);',
        'const loader = createBundleLoader();',
        'const entry = loader.load(path.join(__dirname, "entry.cjs"));',
        'entry.later().then((late) => {',
        '  const written = loader.saveCaches().map((file) => path.basename(file).split(".")[0]).sort();',
        '  console.log(JSON.stringify({ answer: entry.answer(), late, written }));',
        '});',
      ].join('\n'),
    );
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (v8Flags: string[] = []): { answer: string; late: string; written: string[] } =>
    JSON.parse(execFileSync(process.execPath, [path.join(dir, 'main.cjs'), ...v8Flags], { encoding: 'utf8' }));
  const caches = () => readdirSync(dir).filter((name) => name.endsWith('.cache')).sort();

  it('runs chunks as CommonJS, siblings through itself, and caches each one a later process takes', () => {
    const first = run();
    expect(first).toEqual({ answer: '42:true:"\\n":object', late: 'late', written: ['entry', 'late', 'other'] });
    expect(caches()).toHaveLength(3);
    expect(caches()[0]).toMatch(new RegExp(`^entry\\.cjs\\.v8-.+-${process.arch}-[0-9a-f]+\\.cache$`));

    // Taken, so nothing to write again.
    expect(run()).toEqual({ ...first, written: [] });
  });

  it('keeps a cache per set of V8 flags: a run under other flags neither refuses nor replaces the usual one', () => {
    const usual = run();
    expect(usual.written).toEqual(['entry', 'late', 'other']);
    // --max-lazy changes the hash V8 checks a cache against on every Node (20, 22, 24).
    expect(run(['--max-lazy']).written).toEqual(['entry', 'late', 'other']);
    expect(caches()).toHaveLength(6);
    expect(run().written).toEqual([]);
    expect(run(['--max-lazy']).written).toEqual([]);
  });

  it('replaces a cache V8 refuses, and still runs the chunk', () => {
    run();
    const entryCache = caches().find((name) => name.startsWith('entry.'))!;
    writeFileSync(path.join(dir, entryCache), 'not a code cache');

    expect(run()).toEqual({ answer: '42:true:"\\n":object', late: 'late', written: ['entry'] });
    expect(run().written).toEqual([]);
  });

  it('a cache it cannot write costs nothing: the chunks run and no temp file is left', () => {
    run();
    for (const name of caches()) {
      rmSync(path.join(dir, name));
      // A directory where the cache goes: not readable as a cache, not replaceable by a file.
      mkdirSync(path.join(dir, name, 'occupied'), { recursive: true });
    }

    expect(run()).toEqual({ answer: '42:true:"\\n":object', late: 'late', written: [] });
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });
});
