import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { findExecutable } from '../../src/proc/find-executable.js';
import { runProgram } from '../../src/proc/run-program.js';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { isAlive } from '../tools/helpers.js';

// Each helper on its own, found on a PATH that holds only it: the order perl, python3, none.

let dir: string;
let bin: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'corral-subreaper-'));
  bin = path.join(dir, 'bin');
  await mkdir(bin);
  await mkdir(path.join(dir, 'pids'));
  await writeFile(path.join(dir, 'sleeper.sh'), 'echo $$ > "pids/$1.tmp" && mv "pids/$1.tmp" "pids/$1"\nexec sleep 1000\n');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** The real program behind `name` on this machine's usual paths (not a version manager's shim). */
const installed = (name: string): string | undefined => findExecutable(name, '/usr/local/bin:/usr/bin:/bin');

async function runUnder(kind: 'perl' | 'python3', command: string) {
  await symlink(installed(kind)!, path.join(bin, kind)).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const subreaper = await findSubreaper(bin);
  expect(subreaper.kind).toBe(kind);
  if (subreaper.kind === 'none') throw new Error(subreaper.reason);
  const [file, ...args] = subreaper.wrap(['bash', '--norc', '-c', command]);
  return runProgram(file!, args, { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 30_000, detached: true });
}

describe.each(['perl', 'python3'] as const)('the %s helper', (kind) => {
  const skip = installed(kind) === undefined;
  if (skip) console.warn(`skipped: no ${kind} installed here, so its helper cannot be tried`);

  test.skipIf(skip)('ends a setsid daemon and keeps the exit code and the output', async () => {
    const result = await runUnder(kind, 'setsid -f sh sleeper.sh d >/dev/null 2>&1; until [ -s pids/d ]; do sleep 0.02; done; echo out; echo err >&2; exit 3');
    expect(result).toMatchObject({ exitCode: 3, signal: null, timedOut: false });
    expect(result.stdout.toString()).toBe('out\n');
    expect(result.stderr.toString()).toBe('err\n');
    const pid = Number((await readFile(path.join(dir, 'pids/d'), 'utf8')).trim());
    expect(await isAlive(pid)).toBe(false);
  });

  test.skipIf(skip)('dies of the signal that killed the command, without a core dump', async () => {
    expect(await runUnder(kind, 'kill -TERM $$')).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
    expect(await runUnder(kind, 'kill -SEGV $$')).toMatchObject({ exitCode: null, signal: 'SIGSEGV' });
    await expect(readFile(path.join(dir, 'core'))).rejects.toThrow();
  });

  test.skipIf(skip)('leaves SIGPIPE as it found it: a writer to a closed pipe dies quietly', async () => {
    const result = await runUnder(kind, 'set -o pipefail; yes | head -c 4 >/dev/null; echo "status ${PIPESTATUS[0]}"');
    expect(result.stdout.toString()).toBe('status 141\n');
    expect(result.stderr.toString()).toBe('');
  });
});

test('without perl or python3 there is no subreaper, and the reason says why', async () => {
  const subreaper = await findSubreaper(bin);
  expect(subreaper).toEqual({ kind: 'none', reason: 'no perl on PATH; no python3 on PATH' });
});
