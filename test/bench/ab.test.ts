// bench/ab.mjs is how a change is measured against the build before it: a copy of the
// build must run as the CLI does, and each build must get its own figures, in the order given.
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { tempDir } from '../../bench/lib.mjs';

const AB = path.resolve(import.meta.dirname, '../../bench/ab.mjs');
let scratch: { dir: string; dispose(): void };
beforeAll(() => {
  scratch = tempDir('ab-test');
});
afterAll(() => scratch.dispose());

describe('bench/ab.mjs', () => {
  it('copies the build, and times each copy to its first request', () => {
    const [a, b] = ['a', 'b'].map((name) => path.join(scratch.dir, name));
    for (const dir of [a, b]) execFileSync(process.execPath, [AB, `--copy=${dir}`]);
    expect(execFileSync(process.execPath, [path.join(a!, 'bin/corral.cjs'), '--version'], { encoding: 'utf8' })).toMatch(/\d+\.\d+\.\d+/);
    const out = execFileSync(process.execPath, [AB, '--rounds=1', a!, b!], { encoding: 'utf8' });
    const lines = out.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^${a}  first request \\d+\\.\\d\\d ms$`));
    expect(lines[1]).toMatch(new RegExp(`^${b}  first request \\d+\\.\\d\\d ms$`));
  }, 120_000);

  it('refuses fewer than two builds with a usage error', () => {
    const result = spawnSync(process.execPath, [AB, scratch.dir], { encoding: 'utf8' });
    expect(result.status).toBe(64);
    expect(result.stderr).toMatch(/usage: node bench\/ab\.mjs/);
  });
});
