import { mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { runCommand, type RunCommandOptions } from '../../src/proc/run-command.js';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { isAlive, makeTempDir } from './helpers.js';

// Without a sandbox, a command's processes must all end with it, also those that left its
// process group and session: each way of detaching below writes its pid to a file in
// `pids/` and then becomes `sleep 1000`, with its output away from the command's pipes.

let dir: string;
let cleanup: () => Promise<void>;
const started: number[] = [];
beforeEach(async () => {
  ({ dir, cleanup } = await makeTempDir());
  await mkdir(path.join(dir, 'pids'));
  await writeFile(path.join(dir, 'sleeper.sh'), 'echo $$ > "pids/$1.tmp" && mv "pids/$1.tmp" "pids/$1"\nexec sleep 1000\n');
});
afterEach(async () => {
  // A failing test must not leave its daemons on the machine.
  for (const pid of started.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone, as it should be.
    }
  }
  await cleanup();
});

const reaper = await findSubreaper();
const skipReason = reaper.kind === 'none' ? `no child subreaper on this machine (${reaper.reason}); setsid processes are not contained here` : '';
if (skipReason) console.warn(`skipped: ${skipReason}`);

function options(command: string, extra: Partial<RunCommandOptions> = {}): RunCommandOptions {
  return { command, cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 10_000, ...extra };
}

/** A shell snippet: becomes `sleep 1000` after writing its pid to pids/NAME. */
const sleeper = (name: string): string => `sh sleeper.sh ${name}`;
/** Waits until pids/NAME exists, so the command does not end before its daemon has started. */
const awaitPid = (name: string): string => `until [ -s pids/${name} ]; do sleep 0.02; done`;

const DETACHED: Record<string, string> = {
  'setsid … &': `setsid ${sleeper('d')} >/dev/null 2>&1 &`,
  'setsid -f': `setsid -f ${sleeper('d')} >/dev/null 2>&1`,
  'a double fork with setsid (a classic daemon)': `( setsid ${sleeper('d')} >/dev/null 2>&1 & ) &`,
  // nohup and disown alone stay in the group, which the group kill already ended; kept so
  // the subreaper is shown to end it too.
  'nohup … & disown': `nohup ${sleeper('d')} >/dev/null 2>&1 & disown`,
  'a perl script calling setsid() between two forks': `perl -MPOSIX -e 'exit if fork; POSIX::setsid(); exit if fork; exec "sh", "sleeper.sh", "d"' >/dev/null 2>&1`,
  'a node script starting a detached child': `node -e 'require("child_process").spawn("sh", ["sleeper.sh", "d"], { detached: true, stdio: "ignore" }).unref()'`,
  'a process in a new process group of its own (set -m)': `set -m\n${sleeper('d')} >/dev/null 2>&1 &`,
};

async function pidsIn(folder: string): Promise<number[]> {
  const names = await readdir(folder);
  const pids = await Promise.all(names.filter((name) => !name.endsWith('.tmp')).map(async (name) => Number((await readFile(path.join(folder, name), 'utf8')).trim())));
  started.push(...pids);
  return pids;
}

describe.skipIf(skipReason !== '')('no survivors without a sandbox', () => {
  test.each(Object.entries(DETACHED))('%s: gone when the command returns', async (_, start) => {
    const result = await runCommand(options(`${start}\n${awaitPid('d')}\necho started`));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: 'started\n' });
    const [pid] = await pidsIn(path.join(dir, 'pids'));
    expect(pid).toBeGreaterThan(0);
    // Dead by the time the call returns: no wait.
    expect(await isAlive(pid!)).toBe(false);
  });

  test('a failing command keeps its exit code, and its setsid daemon is gone', async () => {
    const result = await runCommand(options(`setsid -f ${sleeper('d')} >/dev/null 2>&1; ${awaitPid('d')}; echo out; echo err >&2; exit 7`));
    expect(result.exitCode).toBe(7);
    expect(result.signal).toBeNull();
    expect(result.output).toContain('out\n');
    expect(result.output).toContain('err\n');
    const [pid] = await pidsIn(path.join(dir, 'pids'));
    expect(await isAlive(pid!)).toBe(false);
  });

  test('a command killed by a signal is reported so, as before', async () => {
    const result = await runCommand(options('kill -TERM $$'));
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGTERM', timedOut: false });
  });

  test('a timeout kills setsid grandchildren (and their children) too', async () => {
    const result = await runCommand(
      options(`setsid ${sleeper('a')} >/dev/null 2>&1 &\nsetsid -f sh -c '${sleeper('b')} & wait' >/dev/null 2>&1\n${awaitPid('a')}; ${awaitPid('b')}; sleep 1000`, { timeoutMs: 1_500 }),
    );
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true, aborted: false });
    const pids = await pidsIn(path.join(dir, 'pids'));
    expect(pids).toHaveLength(2);
    for (const pid of pids) await vi.waitFor(async () => expect(await isAlive(pid)).toBe(false));
  });

  test('an abort kills setsid grandchildren too', async () => {
    const controller = new AbortController();
    const running = runCommand(options(`setsid -f ${sleeper('d')} >/dev/null 2>&1; sleep 1000`, { signal: controller.signal }));
    await vi.waitFor(async () => expect((await readdir(path.join(dir, 'pids'))).includes('d')).toBe(true), { timeout: 10_000 });
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', aborted: true, timedOut: false });
    const [pid] = await pidsIn(path.join(dir, 'pids'));
    await vi.waitFor(async () => expect(await isAlive(pid!)).toBe(false));
  });

  test('a command that kills its own process group (trap "kill 0" EXIT) ends as it did before', async () => {
    const result = await runCommand(options(`trap 'kill 0' EXIT; setsid -f ${sleeper('d')} >/dev/null 2>&1; ${awaitPid('d')}; sleep 1000 & echo done`));
    expect(result.output).toBe('done\n');
    expect(result.signal).toBe('SIGTERM');
    const [pid] = await pidsIn(path.join(dir, 'pids'));
    expect(await isAlive(pid!)).toBe(false);
  });

  test('with input (a hook), a setsid daemon is gone too, and the input reaches the command', async () => {
    const result = await runCommand(options(`setsid -f ${sleeper('d')} >/dev/null 2>&1\n${awaitPid('d')}\ncat`, { input: 'given\n', separateStderr: true }));
    expect(result).toMatchObject({ exitCode: 0, stdout: 'given\n', stderr: '' });
    const [pid] = await pidsIn(path.join(dir, 'pids'));
    expect(await isAlive(pid!)).toBe(false);
  });

  test('stdin is at EOF and input still reaches the command', async () => {
    expect(await runCommand(options('cat; echo done'))).toMatchObject({ exitCode: 0, output: 'done\n' });
    expect(await runCommand(options('cat', { input: 'given\n' }))).toMatchObject({ exitCode: 0, output: 'given\n' });
  });
});
