import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createSandbox, type Sandbox } from '../../src/guard/sandbox/sandbox.js';
import { runCommand, type RunCommandOptions } from '../../src/proc/run-command.js';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { childrenOf, daemonSleeps, DAEMONS, sleepsOf, uniqueSleep } from '../support/sleeps.js';
import { isAlive } from '../tools/helpers.js';

// Without a sandbox, a run's commands go to one perl supervisor that is a child subreaper:
// corral forks once a run, not once a command. Each command must still get what a process
// of its own gave it (its environment, cwd, stdin at EOF, exit status as spawn() reports
// it), and nothing it started may outlive it: its process group, and every daemon that
// left the group, come back to the supervisor and are ended before it reports the end.

const reaper = await findSubreaper();
const skip = reaper.kind !== 'perl';
if (skip) console.warn('skipped: perl does not work as a child subreaper here, so commands run without a supervisor');

let dir: string;
let sandbox: Sandbox;
beforeAll(async () => {
  dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'corral-reaper-sup-')));
  sandbox = await createSandbox({ mode: 'none', worktree: dir, tmpDir: dir, network: true });
});
afterAll(async () => {
  await sandbox.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (command: string, more: Partial<RunCommandOptions> = {}) =>
  runCommand({ command, cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 30_000, outputCap: 100_000, sandbox, ...more });


describe.skipIf(skip)('one supervisor for a run without a sandbox', () => {
  it('runs every command under the same supervisor, which is not corral', async () => {
    const first = await run('echo $PPID');
    const second = await run('echo $PPID');
    expect(first.output).toBe(second.output);
    expect(Number(first.output)).not.toBe(process.pid);
    expect(readFileSync(`/proc/${Number(first.output)}/cmdline`, 'utf8')).toMatch(/^\S*perl\0-e\0/);
  });

  it('gives each command its own environment, cwd, stdin at EOF, and a session of its own', async () => {
    expect((await run('echo "$ONLY_HERE"; export LEFT=1', { env: { PATH: process.env.PATH ?? '', ONLY_HERE: 'first' } })).output).toBe('first\n');
    const next = await run('echo "${ONLY_HERE-unset} ${LEFT-unset}"; env | cut -d= -f1 | sort | tr "\\n" " "');
    expect(next.output).toBe('unset unset\nPATH PWD SHLVL _ ');
    const where = await run('pwd; cat; echo "eof $?"; ps -o pid=,pgid=,sid= -p $$ | awk \'{print ($1==$2 && $2==$3) ? "leader" : "not leader"}\'', { cwd: '/' });
    expect(where).toMatchObject({ exitCode: 0, output: '/\neof 0\nleader\n' });
  });

  it('reports exit codes and signals as spawn() does, and keeps the streams apart when asked', async () => {
    expect(await run('exit 3')).toMatchObject({ exitCode: 3, signal: null });
    expect(await run('kill -TERM $$')).toMatchObject({ exitCode: null, signal: 'SIGTERM' });
    expect(await run('echo out; echo err >&2', { separateStderr: true })).toMatchObject({ stdout: 'out\n', stderr: 'err\n', output: 'out\nerr\n' });
    expect(await run('exec /nonexistent/program')).toMatchObject({ exitCode: 127 });
    expect(await run('set -o pipefail; yes | head -c 4 >/dev/null; echo "status ${PIPESTATUS[0]}"')).toMatchObject({ output: 'status 141\n' });
  });

  it('ends a grandchild and every daemon (setsid, setsid -f, a double fork, nohup) before the command returns', async () => {
    const token = uniqueSleep();
    const result = await run(`${DAEMONS(token)}\nsleep 0.3; echo started`);
    expect(result).toMatchObject({ exitCode: 0, output: 'started\n' });
    expect(daemonSleeps(token)).toEqual([]);
  });

  it('a timeout kills the whole tree, daemons included', async () => {
    const token = uniqueSleep();
    const result = await run(`${DAEMONS(token)}\nsleep ${token}`, { timeoutMs: 1_500 });
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
    expect(daemonSleeps(token)).toEqual([]);
    expect(sleepsOf(token)).toEqual([]);
  });

  it('the interrupt kills the whole tree too', async () => {
    const token = uniqueSleep();
    const killer = new AbortController();
    const running = run(`${DAEMONS(token)}\nsleep ${token}`, { signal: killer.signal });
    await vi.waitFor(() => expect(daemonSleeps(token)).toHaveLength(5), { timeout: 10_000 });
    killer.abort();
    expect(await running).toMatchObject({ exitCode: null, aborted: true });
    expect(daemonSleeps(token)).toEqual([]);
  });

  it('the interrupt right after the start still ends the command, though it may not lead its group yet', async () => {
    for (let i = 0; i < 5; i++) {
      const token = uniqueSleep();
      const killer = new AbortController();
      const running = run(`sleep ${token}`, { signal: killer.signal });
      // Once the command is told to the supervisor, at once: before its fork has called setsid, often.
      await new Promise((resolve) => setImmediate(resolve));
      killer.abort();
      expect(await running).toMatchObject({ exitCode: null, aborted: true });
      expect(sleepsOf(token)).toEqual([]);
    }
  });

  it('a command that kills the supervisor is reported killed, leaves nothing in its group, and the next command gets a new one', async () => {
    const before = Number((await run('echo $PPID')).output);
    const token = uniqueSleep();
    const result = await run(`sleep ${token} & kill -KILL $PPID; wait`);
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    await vi.waitFor(() => expect(sleepsOf(token)).toEqual([]), { timeout: 5_000 });
    const after = await run('echo $PPID');
    expect(after.exitCode).toBe(0);
    expect(Number(after.output)).not.toBe(before);
    expect(await isAlive(before)).toBe(false);
  });

  /** The supervisor, and the process it forked for the next command once the last ended: a perl waiting for its command. */
  async function waitingProcess(): Promise<{ supervisor: number; waiting: number }> {
    const supervisor = Number((await run('echo $PPID')).output);
    const waiting = await vi.waitFor(() => {
      const found = childrenOf(supervisor).filter((child) => child.comm === 'perl' && child.state !== 'Z');
      expect(found).toHaveLength(1);
      return found[0]!.pid;
    });
    return { supervisor, waiting };
  }
  const echoOnly = (value: string) => run('echo "$ONLY_HERE"', { env: { PATH: process.env.PATH ?? '', ONLY_HERE: value } });

  it('forks each command ahead, and runs it all the same when that process was killed while it waited', async () => {
    const { supervisor, waiting } = await waitingProcess();
    process.kill(waiting, 'SIGKILL');
    // Dead before the command comes. A kill is carried out only once the process runs
    // again, and on a busy machine a command written meanwhile is read first: that child
    // took its command and was killed, and the command is rightly reported so.
    await vi.waitFor(() => expect(childrenOf(supervisor).some((child) => child.pid === waiting && child.state !== 'Z')).toBe(false));
    expect(await echoOnly('still runs')).toMatchObject({ exitCode: 0, output: 'still runs\n' });
    expect(Number((await run('echo $PPID')).output)).toBe(supervisor);
  });

  it('runs a command told to a waiting process that was killed before it could take it', async () => {
    const { supervisor, waiting } = await waitingProcess();
    // Stopped, it cannot read its command: the spec sits in its pipe when the kill comes.
    process.kill(waiting, 'SIGSTOP');
    const running = echoOnly('ran once');
    // Time for the supervisor to hand it the command; were the kill first, the command is forked as it comes.
    await new Promise((resolve) => setTimeout(resolve, 200));
    process.kill(waiting, 'SIGKILL');
    expect(await running).toMatchObject({ exitCode: 0, output: 'ran once\n' });
    expect(Number((await run('echo $PPID')).output)).toBe(supervisor);
  });

  it('signalled to stop (pkill perl), it ends what the command started before it goes', async () => {
    const token = uniqueSleep();
    const result = await run(`setsid sleep ${token} & sleep 0.3; kill -TERM $PPID; wait`);
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    await vi.waitFor(() => expect(sleepsOf(token)).toEqual([]), { timeout: 5_000 });
    expect((await run('echo next')).output).toBe('next\n');
  });

  it('reports a command that has ended though something it could not end still holds its output', async () => {
    const pidFile = path.join(dir, `held-${uniqueSleep()}`);
    const running = run(`echo $$ > ${pidFile}; sleep 0.5; echo done`);
    await vi.waitFor(() => expect(existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n')).toBe(true), { timeout: 5_000 });
    // This test's own process holds the command's stdout open: nothing the supervisor can end.
    const held = openSync(`/proc/${readFileSync(pidFile, 'utf8').trim()}/fd/1`, 'w');
    try {
      expect(await running).toMatchObject({ exitCode: 0, output: 'done\n' });
    } finally {
      closeSync(held);
    }
  });

  it('ends the running command and all it started when the run closes it', async () => {
    const own = await createSandbox({ mode: 'none', worktree: dir, tmpDir: dir, network: true });
    const token = uniqueSleep();
    const running = runCommand({ command: `${DAEMONS(token)}\nsleep ${token}`, cwd: dir, env: { PATH: process.env.PATH ?? '' }, timeoutMs: 60_000, outputCap: 1_000, sandbox: own });
    await vi.waitFor(() => expect(daemonSleeps(token)).toHaveLength(5), { timeout: 10_000 });
    const supervisor = own.supervisor!().pid!;
    await own.close();
    expect(await running).toMatchObject({ exitCode: null, signal: 'SIGKILL' });
    expect(daemonSleeps(token)).toEqual([]);
    expect(sleepsOf(token)).toEqual([]);
    expect(await isAlive(supervisor)).toBe(false);
  });
});
