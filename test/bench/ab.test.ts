// bench/ab.mjs is how a change is measured against the build before it: a copy of the
// build must run as the CLI does, and each build must get its own figures, in the order given.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { tempDir } from '../../bench/lib.mjs';

const AB = path.resolve(import.meta.dirname, '../../bench/ab.mjs');
let scratch: { dir: string; dispose(): void };
let a: string;
let b: string;
beforeAll(() => {
  scratch = tempDir('ab-test');
  [a, b] = ['a', 'b'].map((name) => path.join(scratch.dir, name)) as [string, string];
  for (const dir of [a, b]) execFileSync(process.execPath, [AB, `--copy=${dir}`]);
}, 60_000);
afterAll(() => scratch.dispose());

/** Each line of the output: a build's folder and its figures, `name value ms` each. */
function rowsOf(out: string): { dir: string; figures: Record<string, number> }[] {
  return out
    .trim()
    .split('\n')
    .map((line) => {
      const [dir, ...figures] = line.split('  ');
      return { dir: dir!, figures: Object.fromEntries(figures.map((figure) => /^(.+) (\d+\.\d\d) ms$/.exec(figure)!.slice(1)).map(([name, ms]) => [name, Number(ms)])) };
    });
}

describe('bench/ab.mjs', () => {
  it('copies the build, and times each copy to its first request', () => {
    expect(execFileSync(process.execPath, [path.join(a, 'bin/corral.cjs'), '--version'], { encoding: 'utf8' })).toMatch(/\d+\.\d+\.\d+/);
    const rows = rowsOf(execFileSync(process.execPath, [AB, '--rounds=1', a, b], { encoding: 'utf8' }));
    expect(rows.map((row) => row.dir)).toEqual([a, b]);
    for (const row of rows) expect(Object.keys(row.figures)).toEqual(['first request']);
  }, 120_000);

  it('times runs of N steps: the run, its fixed part and the parts of a step', () => {
    const rows = rowsOf(execFileSync(process.execPath, [AB, '--rounds=1', '--steps=20', a, b], { encoding: 'utf8' }));
    expect(rows.map((row) => row.dir)).toEqual([a, b]);
    for (const { figures } of rows) {
      expect(Object.keys(figures)).toEqual(['run', 'start', 'first step', 'tail', 'model', 'guard', 'command', 'rest']);
      // The parts are of the middle steps, so together they are less than the run.
      expect(figures.start! + figures['first step']! + figures.tail!).toBeLessThan(figures.run!);
      expect(figures.command).toBeGreaterThan(0);
    }
  }, 120_000);

  it('refuses fewer than two builds, or a folder without one, with a usage error', () => {
    const one = spawnSync(process.execPath, [AB, a], { encoding: 'utf8' });
    expect(one.status).toBe(64);
    expect(one.stderr).toMatch(/^usage: node bench\/ab\.mjs/);
    const nowhere = path.join(scratch.dir, 'nowhere');
    const missing = spawnSync(process.execPath, [AB, a, nowhere], { encoding: 'utf8' });
    expect(missing.status).toBe(64);
    expect(missing.stderr).toContain(`no build in ${nowhere} (no bin/corral.cjs); usage: node bench/ab.mjs`);
  });
});
