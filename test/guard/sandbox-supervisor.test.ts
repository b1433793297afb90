import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InternalError } from '../../src/errors.js';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { createSandbox, type Sandbox } from '../../src/guard/sandbox/sandbox.js';
import { runCommand, type RunCommandOptions } from '../../src/proc/run-command.js';
import { daemonSleeps, DAEMONS, sleepsOf, uniqueSleep } from '../support/sleeps.js';
import { isAlive } from '../tools/helpers.js';

// One bubblewrap per run: the commands of a run go to a supervisor inside a sandbox started
// at the first of them, and each still gets what a bubblewrap of its own gave it: its own
// environment, stdin at EOF, its exit status, and nothing it started left once it ends.

const probe = await probeBubblewrap();
const made: string[] = [];
const sandboxes: Sandbox[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

function git(cwd: string, args: string[]): void {
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** A repository with a linked worktree, as corral makes them, and the run's temp dir. */
function workspace(): { worktree: string; tmpDir: string } {
  const repo = temp('corral-sup-repo-');
  git(repo, ['init', '-q']);
  writeFileSync(path.join(repo, 'a.txt'), 'a\n');
  git(repo, ['add', '-A']);
  git(repo, ['commit', '-qm', 'base']);
  const worktree = path.join(temp('corral-sup-wt-'), 'wt');
  git(repo, ['worktree', 'add', '--detach', '-q', worktree, 'HEAD']);
  return { worktree: realpathSync(worktree), tmpDir: temp('corral-sup-tmp-') };
}

async function sandboxFor(where: { worktree: string; tmpDir: string }, perCommand = false): Promise<Sandbox> {
  const sandbox = await createSandbox({ mode: 'bwrap', ...where, network: false, home: temp('corral-sup-home-'), ...(perCommand ? { perCommand } : {}) });
  sandboxes.push(sandbox);
  return sandbox;
}

describe.skipIf(!probe.ok)('one sandbox per run, with a supervisor inside', () => {
  let where: { worktree: string; tmpDir: string };
  let sandbox: Sandbox;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };
  const run = (command: string, extra: Partial<RunCommandOptions> = {}) =>
    runCommand({ command, cwd: where.worktree, env, timeoutMs: 20_000, outputCap: 10_000, sandbox, ...extra });

  beforeAll(async () => {
    where = workspace();
    sandbox = await sandboxFor(where);
  });

  it('runs every command of the run in the one sandbox, started at the first', async () => {
    expect(sandbox.supervised).toBe(true);
    // PID 1 of the namespace, and the namespace itself: the same for both commands.
    const first = await run('cut -d" " -f2 /proc/1/stat; readlink /proc/self/ns/pid');
    const second = await run('cut -d" " -f2 /proc/1/stat; readlink /proc/self/ns/pid');
    expect(first).toMatchObject({ exitCode: 0 });
    expect(first.output).toMatch(/^\(perl\)\npid:\[\d+\]\n$/);
    expect(second.output).toBe(first.output);
  });

  it('gives each command its own environment: what one was given or exported is gone in the next', async () => {
    expect((await run('echo "$ONLY_HERE"; export LEFT=1', { env: { ...env, ONLY_HERE: 'first' } })).output).toBe('first\n');
    const next = await run('echo "${ONLY_HERE-unset} ${LEFT-unset}"; env | cut -d= -f1 | sort | tr "\\n" " "');
    expect(next.output).toBe('unset unset\nPATH PWD SHLVL _ ');
  });

  it('starts each command in the worktree (or its cwd), with stdin at EOF, in a session and process group of its own', async () => {
    const result = await run('pwd; cat; echo "eof $?"; ps -o pid=,pgid=,sid= -p $$ | awk \'{print ($1==$2 && $2==$3) ? "leader" : "not leader"}\'', { cwd: path.join(where.worktree) });
    expect(result).toMatchObject({ exitCode: 0, output: `${where.worktree}\neof 0\nleader\n` });
    // Forked straight from the supervisor, in a session of its own: not the supervisor's.
    const group = await run('ps -o pgid= -p $$; ps -o pgid= -p $PPID; ps -o sid= -p $$; echo $PPID');
    const [own, parents, session, parent] = group.output.trim().split('\n').map((line) => line.trim());
    expect(own).toBe(session);
    expect(own).not.toBe(parents);
    expect(parent).toBe('1');
  });

  it('reports exit codes and signals as a bubblewrap of its own did', async () => {
    expect((await run('exit 3')).exitCode).toBe(3);
    expect(await run('kill -TERM $$')).toMatchObject({ exitCode: 143, signal: null });
    expect(await run('echo out; echo err >&2', { separateStderr: true })).toMatchObject({ stdout: 'out\n', stderr: 'err\n', output: 'out\nerr\n' });
    expect(await run('exec /nonexistent/program')).toMatchObject({ exitCode: 127 });
  });

  it('passes any bytes of output, and values with `=`, newlines and non-ASCII in the environment, as they are', async () => {
    const value = 'a=b\nc ü ∂';
    const result = await run('printf "%s" "$ODD"; printf "\\000\\001X\\000\\000\\000\\011O\\377" | od -An -tx1 | tr -s " "', { env: { ...env, ODD: value } });
    expect(result.output).toBe(`${value} 00 01 58 00 00 00 09 4f ff\n`);
    // Raw, bytes that look like a frame header of the protocol: counted, and what follows arrives.
    const raw = await run('printf "X\\000\\000\\000\\001\\000\\000\\000\\005hello"; echo tail');
    expect(raw).toMatchObject({ exitCode: 0, totalBytes: 19 });
    expect(raw.output.endsWith('hellotail\n')).toBe(true);
  });

  it('streams large output back, capped as before', async () => {
    const flood = await run("head -c 5000000 /dev/zero | tr '\\0' a; echo; echo end", { outputCap: 1_000 });
    expect(flood.exitCode).toBe(0);
    expect(flood.totalBytes).toBe(5_000_005);
    expect(flood.output.length).toBeLessThan(1_100);
    expect(flood.output.endsWith('end\n')).toBe(true);
  });

  it('ends a grandchild and every daemon (setsid, setsid -f, a double fork, nohup) before the command returns', async () => {
    const token = uniqueSleep();
    const result = await run(`${DAEMONS(token)}\nsleep 0.2; echo started`);
    expect(result).toMatchObject({ exitCode: 0, output: 'started\n' });
    // Ended before the result came back, not some time later.
    expect(daemonSleeps(token)).toEqual([]);
    // And the sandbox is still there for the next command.
    expect((await run('echo next')).output).toBe('next\n');
  });

  it('a timeout kills the whole tree, daemons included', async () => {
    const token = uniqueSleep();
    const running = run(`${DAEMONS(token)}\nsleep 1000`, { timeoutMs: 1_500 });
    await vi.waitFor(() => expect(daemonSleeps(token)).toHaveLength(5), { timeout: 10_000 });
    expect(await running).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
    expect(daemonSleeps(token)).toEqual([]);
    expect((await run('echo next')).output).toBe('next\n');
  });

  it('the interrupt kills the whole tree too', async () => {
    const token = uniqueSleep();
    const killer = new AbortController();
    const running = run(`${DAEMONS(token)}\nsleep 1000`, { signal: killer.signal });
    await vi.waitFor(() => expect(daemonSleeps(token)).toHaveLength(5), { timeout: 10_000 });
    killer.abort();
    expect(await running).toMatchObject({ exitCode: null, aborted: true });
    expect(daemonSleeps(token)).toEqual([]);
  });

  it('cannot be signalled by a command, nor stopped by one killing its own parent', async () => {
    const result = await run('kill -KILL 1; kill -STOP 1; kill -TERM 1; echo still here');
    expect(result.output).toContain('still here\n');
    expect(await run('kill -KILL $PPID; kill -TERM $PPID; echo alive')).toMatchObject({ exitCode: 0, output: 'alive\n' });
    expect((await run('echo next')).output).toBe('next\n');
  });

  it('cannot be read or traced by a command (its memory holds other commands of the run)', async () => {
    const result = await run('cat /proc/1/environ /proc/1/maps >/dev/null 2>&1 && echo readable || echo hidden');
    expect(result.output).toBe('hidden\n');
  });

  it('queues commands given at once and runs them one after the other', async () => {
    const results = await Promise.all([run('echo one'), run('echo two'), run('echo three')]);
    expect(results.map((r) => r.output)).toEqual(['one\n', 'two\n', 'three\n']);
  });
});

describe.skipIf(!probe.ok)('when the supervisor fails', () => {
  it('a supervisor killed mid-command fails that command and every later one with an InternalError, never a hang', async () => {
    const where = workspace();
    const sandbox = await sandboxFor(where);
    const run = (command: string) => runCommand({ command, cwd: where.worktree, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 60_000, outputCap: 10_000, sandbox });
    const token = uniqueSleep();
    const running = run(`sleep ${token}`);
    await vi.waitFor(() => expect(sleepsOf(token)).toHaveLength(1), { timeout: 10_000 });
    const supervisor = sandbox.supervisor!();
    process.kill(supervisor.pid!, 'SIGKILL');
    const error = await running.then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(InternalError);
    expect((error as Error).message).toMatch(/^the sandbox of the run's commands \(bubblewrap with its supervisor\) ended unexpectedly \(killed by SIGKILL/);
    await vi.waitFor(() => expect(sleepsOf(token)).toEqual([]), { timeout: 10_000 });
    await expect(run('echo again')).rejects.toBeInstanceOf(InternalError);
  });

  it('is ended with the sandbox: nothing of it is left once the run closes it', async () => {
    const where = workspace();
    const sandbox = await sandboxFor(where);
    await runCommand({ command: 'true', cwd: where.worktree, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 1_000, sandbox });
    const pid = sandbox.supervisor!().pid!;
    expect(await isAlive(pid)).toBe(true);
    await sandbox.close();
    expect(await isAlive(pid)).toBe(false);
  });
});

describe.skipIf(!probe.ok)('where the supervisor cannot run', () => {
  it('a bubblewrap without --as-pid-1 (older than the supervisor needs) gives each command its own, with a warning', async () => {
    const bin = temp('corral-sup-oldbwrap-');
    const real = probe.ok ? probe.bwrap : 'bwrap';
    writeFileSync(path.join(bin, 'bwrap'), `#!/bin/sh\nif [ "$1" = --help ]; then ${real} --help 2>&1 | grep -v -e --as-pid-1; exit 0; fi\nexec ${real} "$@"\n`);
    chmodSync(path.join(bin, 'bwrap'), 0o755);
    const where = workspace();
    const sandbox = await createSandbox({ mode: 'bwrap', ...where, network: false, home: temp('corral-sup-home-'), searchPath: `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    sandboxes.push(sandbox);
    expect(sandbox.supervised).toBe(false);
    expect(sandbox.warning).toBe(`sandbox: a bubblewrap for each command (${path.join(bin, 'bwrap')} has no --as-pid-1, which its supervisor needs), so each command costs a sandbox start`);
    const result = await runCommand({ command: 'cut -d" " -f2 /proc/1/stat', cwd: where.worktree, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 1_000, sandbox });
    expect(result).toMatchObject({ exitCode: 0, output: '(bwrap)\n' });
  });

  it('without a perl the sandbox shows, gives each command a bubblewrap of its own, and says so in a warning', async () => {
    // bubblewrap, bash and the few tools below, but no perl.
    const bin = temp('corral-sup-noperl-');
    for (const tool of ['bwrap', 'bash', 'cut', 'readlink', 'git']) {
      const found = execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
      symlinkSync(found, path.join(bin, tool));
    }
    const where = workspace();
    const sandbox = await createSandbox({ mode: 'bwrap', ...where, network: false, home: temp('corral-sup-home-'), searchPath: bin });
    sandboxes.push(sandbox);
    expect(sandbox.supervised).toBe(false);
    expect(sandbox.warning).toBe('sandbox: a bubblewrap for each command (no perl on PATH that the sandbox shows, for its supervisor), so each command costs a sandbox start');
    const result = await runCommand({ command: 'cut -d" " -f2 /proc/1/stat', cwd: where.worktree, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 1_000, sandbox });
    expect(result).toMatchObject({ exitCode: 0, output: '(bwrap)\n' });
  });
});

describe.skipIf(!probe.ok)('the perl the supervisor runs', () => {
  it('is the first on PATH that the sandbox shows: one under /tmp (private inside) is passed over', async () => {
    const perl = execFileSync('bash', ['-c', 'command -v perl'], { encoding: 'utf8' }).trim();
    const hidden = temp('corral-sup-tmpperl-');
    symlinkSync(perl, path.join(hidden, 'perl'));
    const where = workspace();
    // Taken, it would fail to start (exit 70 for every run); passed over, the next perl serves.
    const sandbox = await createSandbox({ mode: 'bwrap', ...where, network: false, home: temp('corral-sup-home-'), searchPath: `${hidden}:${process.env.PATH ?? '/usr/bin:/bin'}` });
    sandboxes.push(sandbox);
    expect(sandbox.supervised).toBe(true);
    const result = await runCommand({ command: 'cut -d" " -f2 /proc/1/stat', cwd: where.worktree, env: { PATH: '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 1_000, sandbox });
    expect(result).toMatchObject({ exitCode: 0, output: '(perl)\n' });
  });
});

describe.skipIf(!probe.ok)('sandbox.per_command: a bubblewrap for each command, as before', () => {
  it('runs each command in a sandbox of its own, with the same guarantees', async () => {
    const where = workspace();
    const sandbox = await sandboxFor(where, true);
    expect(sandbox.supervised).toBe(false);
    expect(sandbox.supervisor).toBeUndefined();
    const run = (command: string, extra: Partial<RunCommandOptions> = {}) =>
      runCommand({ command, cwd: where.worktree, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 10_000, sandbox, ...extra });
    const first = await run('cut -d" " -f2 /proc/1/stat; readlink /proc/self/ns/pid');
    const second = await run('cut -d" " -f2 /proc/1/stat; readlink /proc/self/ns/pid');
    expect(first.output).toMatch(/^\(bwrap\)\npid:\[\d+\]\n$/);
    expect(second.output).not.toBe(first.output);
    expect((await run('echo "$X"', { env: { PATH: '/usr/bin:/bin', X: 'x' } })).output).toBe('x\n');
    const token = uniqueSleep();
    expect(await run(`${DAEMONS(token)}\nsleep 0.2; echo started`)).toMatchObject({ exitCode: 0, output: 'started\n' });
    await vi.waitFor(() => expect(daemonSleeps(token)).toEqual([]), { timeout: 10_000 });
  });
});
