import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { Supervisor, supervisorArgv, type SupervisedCommand } from '../../src/proc/supervisor.js';

// The supervisor execs a command with exactly the environment corral gave it (by the
// execve system call, not perl's exec after rebuilding its own %ENV), so the program named
// without a slash is looked for as execvp looks for it: on the command's PATH, not the
// supervisor's (which is empty), passing over what is not there or cannot be run.

const reaper = await findSubreaper();
const skip = reaper.kind !== 'perl';

let dir: string;
let supervisor: Supervisor;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'corral-sup-exec-')));
  for (const folder of ['first', 'second', 'denied']) mkdirSync(path.join(dir, folder));
  const script = (file: string, text: string, mode: number): void => {
    writeFileSync(file, `#!/bin/sh\necho ${text} "$@" "[$ONLY_HERE]"\n`);
    chmodSync(file, mode);
  };
  // Not executable in the first folder: passed over for the one in the second.
  script(path.join(dir, 'first', 'corral-probe'), 'first', 0o644);
  script(path.join(dir, 'second', 'corral-probe'), 'second', 0o755);
  script(path.join(dir, 'denied', 'corral-denied'), 'denied', 0o644);
  script(path.join(dir, 'here'), 'from the folder', 0o755);
  // No #! line: execvp runs it with /bin/sh, and so must the supervisor.
  writeFileSync(path.join(dir, 'second', 'corral-plain'), 'echo plain "$1" "$0"\n');
  chmodSync(path.join(dir, 'second', 'corral-plain'), 0o755);
  supervisor = new Supervisor(supervisorArgv(reaper.kind === 'perl' ? reaper.program : 'perl', { reaper: true }), 'commands', true);
});
afterAll(async () => {
  await supervisor?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function run(command: SupervisedCommand): Promise<{ end: unknown; output: string }> {
  let output = '';
  const end = await supervisor.run(command, (_stream, chunk) => (output += chunk.toString('utf8'))).done;
  return { end, output };
}

describe.skipIf(skip)("a supervised command's program", () => {
  it("is looked for on the command's own PATH, passing over one that cannot be run", async () => {
    const env = { PATH: `${dir}/nowhere:${dir}/first/corral-probe:${dir}/first:${dir}/second`, ONLY_HERE: 'its env' };
    expect(await run({ argv: ['corral-probe', 'an argument'], cwd: dir, env })).toEqual({ end: { kind: 'exit', code: 0 }, output: 'second an argument [its env]\n' });
  });

  it('runs with /bin/sh when it is a script without a #! line, as execvp does', async () => {
    expect(await run({ argv: ['corral-plain', 'arg'], cwd: dir, env: { PATH: `${dir}/second` } })).toEqual({ end: { kind: 'exit', code: 0 }, output: `plain arg ${dir}/second/corral-plain\n` });
  });

  it('is run as named when the name has a slash, from the command\'s folder when relative', async () => {
    expect(await run({ argv: ['./here'], cwd: dir, env: {} })).toEqual({ end: { kind: 'exit', code: 0 }, output: 'from the folder []\n' });
    // An empty PATH element is the command's folder, as for execvp.
    expect(await run({ argv: ['here'], cwd: dir, env: { PATH: `${dir}/nowhere:` } })).toEqual({ end: { kind: 'exit', code: 0 }, output: 'from the folder []\n' });
  });

  it('that cannot be started is exit 127 with the reason: not found, or found but not runnable', async () => {
    expect(await run({ argv: ['corral-no-such-program'], cwd: dir, env: { PATH: `${dir}/first:${dir}/second` } })).toEqual({
      end: { kind: 'exit', code: 127 },
      output: 'failed to start: corral-no-such-program: No such file or directory\n',
    });
    expect(await run({ argv: ['corral-denied'], cwd: dir, env: { PATH: `${dir}/nowhere:${dir}/denied:${dir}/second` } })).toEqual({
      end: { kind: 'exit', code: 127 },
      output: 'failed to start: corral-denied: Permission denied\n',
    });
    expect(await run({ argv: ['bash', '-c', 'true'], cwd: path.join(dir, 'gone'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } })).toEqual({
      end: { kind: 'exit', code: 127 },
      output: `failed to start: ${path.join(dir, 'gone')}: No such file or directory\n`,
    });
  });
});
