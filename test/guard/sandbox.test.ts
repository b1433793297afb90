import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { bwrapArgv, type BwrapLayout } from '../../src/guard/sandbox/bwrap-argv.js';
import { HIDDEN_IN_HOME, HIDDEN_SYSTEM, NO_NETWORK_HIDDEN, sandboxLayout, within } from '../../src/guard/sandbox/layout.js';
import { findExecutable, probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { createSandbox, NO_SANDBOX, type Sandbox } from '../../src/guard/sandbox/sandbox.js';
import { runCommand, type RunCommandOptions } from '../../src/tools/run-command.js';
import { PROJECT_ROOT } from '../support/cli.js';
import { isAlive } from '../tools/helpers.js';

// The sandbox: the argv it builds (pure), the facts it gathers, the probe, and what a
// command inside it can and cannot do, on real bubblewrap with real processes.

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempIn(parent: string, prefix: string): string {
  const dir = realpathSync(mkdtempSync(path.join(parent, prefix)));
  made.push(dir);
  return dir;
}

/** A temp dir under /tmp: the sandbox's /tmp is private, so a command inside cannot see it at all. */
const hiddenTemp = (prefix = 'corral-sbx-'): string => tempIn(tmpdir(), prefix);

/**
 * A temp dir a sandboxed command can see (read-only): /var/tmp where it is writable, so a
 * failed write there shows the read-only file system and not only a hidden path.
 */
function visibleTemp(prefix = 'corral-sbx-'): string {
  try {
    accessSync('/var/tmp', constants.W_OK);
    return tempIn('/var/tmp', prefix);
  } catch {
    return hiddenTemp(prefix);
  }
}

function git(cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@e', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** A host repository with one commit and a linked worktree of it, as corral makes them. */
function repoAndWorktree(parent = hiddenTemp('corral-sbx-repo-')): { repo: string; worktree: string } {
  git(parent, ['init', '-q']);
  writeFileSync(path.join(parent, 'a.txt'), 'a\n');
  git(parent, ['add', '-A']);
  git(parent, ['commit', '-qm', 'base']);
  const worktree = path.join(hiddenTemp('corral-sbx-wt-'), 'wt');
  git(parent, ['worktree', 'add', '--detach', '-q', worktree, 'HEAD']);
  return { repo: parent, worktree: realpathSync(worktree) };
}

/** A `bwrap` that fails the way a machine without user namespaces does. */
function brokenBwrap(log?: string): string {
  const dir = hiddenTemp('corral-fake-bwrap-');
  const record = log ? `echo "$*" >> ${JSON.stringify(log)}\n` : '';
  writeFileSync(path.join(dir, 'bwrap'), `#!/bin/sh\n${record}echo 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n`);
  chmodSync(path.join(dir, 'bwrap'), 0o755);
  return dir;
}

const LAYOUT: BwrapLayout = {
  bwrap: '/usr/bin/bwrap',
  worktree: '/tmp/corral-t-1/wt',
  tmpDir: '/tmp/corral-tmp-1',
  readOnly: ['/tmp/corral-t-1/wt/.git', '/srv/repo/.git/worktrees/wt', '/srv/repo/.git'],
  hiddenDirs: ['/home/u/.ssh'],
  hiddenFiles: ['/home/u/.npmrc'],
  network: false,
  disableUserns: true,
};

describe('bwrapArgv', () => {
  it('builds every namespace and mount in order: read-only root, private /tmp, the worktree, then git metadata read-only over it', () => {
    expect(bwrapArgv(LAYOUT, ['bash', '--norc', '-c', 'make test'], '/tmp/corral-t-1/wt')).toEqual([
      '/usr/bin/bwrap',
      '--unshare-user',
      '--disable-userns',
      '--cap-drop', 'ALL',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-net',
      '--die-with-parent',
      '--new-session',
      '--ro-bind', '/', '/',
      '--dev', '/dev',
      '--proc', '/proc',
      '--bind', '/tmp/corral-tmp-1', '/tmp',
      '--bind', '/tmp/corral-tmp-1', '/tmp/corral-tmp-1',
      '--bind', '/tmp/corral-t-1/wt', '/tmp/corral-t-1/wt',
      '--ro-bind', '/tmp/corral-t-1/wt/.git', '/tmp/corral-t-1/wt/.git',
      '--ro-bind', '/srv/repo/.git/worktrees/wt', '/srv/repo/.git/worktrees/wt',
      '--ro-bind', '/srv/repo/.git', '/srv/repo/.git',
      '--tmpfs', '/home/u/.ssh', '--remount-ro', '/home/u/.ssh',
      '--dev-bind', '/dev/null', '/home/u/.npmrc',
      '--chdir', '/tmp/corral-t-1/wt',
      '--',
      'bash', '--norc', '-c', 'make test',
    ]);
  });

  it('keeps the network only when the ticket allows it, and leaves out what this bwrap does not know', () => {
    const argv = bwrapArgv({ ...LAYOUT, network: true, disableUserns: false }, ['true'], '/');
    expect(argv).not.toContain('--unshare-net');
    expect(argv).not.toContain('--disable-userns');
    expect(argv).toContain('--unshare-user');
    expect(argv).toContain('--unshare-pid');
  });

  it('a temp dir that is /tmp itself is bound once', () => {
    const argv = bwrapArgv({ ...LAYOUT, tmpDir: '/tmp' }, ['true'], '/');
    expect(argv.join(' ')).toContain('--bind /tmp /tmp --bind /tmp/corral-t-1/wt');
  });
});

describe('sandboxLayout', () => {
  it('binds the worktree, its .git file, its gitdir and the common dir (real paths)', () => {
    const { repo, worktree } = repoAndWorktree();
    const tmp = hiddenTemp('corral-sbx-tmp-');
    const layout = sandboxLayout({ bwrap: '/usr/bin/bwrap', disableUserns: true, worktree, tmpDir: tmp, network: false, homes: [] });
    expect(layout.worktree).toBe(worktree);
    expect(layout.tmpDir).toBe(tmp);
    expect(layout.readOnly).toEqual([path.join(worktree, '.git'), path.join(repo, '.git', 'worktrees', 'wt'), path.join(repo, '.git')]);
  });

  it('hides credentials of the home, and /run without network', () => {
    const home = visibleTemp('corral-sbx-home-');
    mkdirSync(path.join(home, '.ssh'));
    writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'key\n');
    writeFileSync(path.join(home, '.npmrc'), '//registry/:_authToken=t\n');
    const worktree = hiddenTemp();
    const layout = sandboxLayout({ bwrap: 'b', disableUserns: true, worktree, tmpDir: hiddenTemp(), network: false, homes: [home] });
    if (within(home, '/tmp')) {
      // No /var/tmp here: a home under /tmp is out of view already, so nothing is bound over it.
      expect(layout.hiddenDirs.some((dir) => within(dir, home))).toBe(false);
    } else {
      expect(layout.hiddenDirs).toContain(path.join(home, '.ssh'));
      expect(layout.hiddenFiles).toContain(path.join(home, '.npmrc'));
    }
    if (existsSync('/run')) {
      expect(layout.hiddenDirs).toContain(realpathSync('/run'));
      // Everything under /run is covered by hiding /run itself.
      expect(layout.hiddenDirs.filter((dir) => dir !== '/run' && within(dir, '/run'))).toEqual([]);
    }
    const online = sandboxLayout({ bwrap: 'b', disableUserns: true, worktree, tmpDir: hiddenTemp(), network: true, homes: [home] });
    expect(online.hiddenDirs).not.toContain('/run');
  });

  it('never hides a folder that holds the worktree or its temp dir', () => {
    const home = visibleTemp('corral-sbx-home-');
    mkdirSync(path.join(home, '.aws'));
    const worktree = path.join(home, '.aws', 'wt');
    mkdirSync(worktree);
    const layout = sandboxLayout({ bwrap: 'b', disableUserns: true, worktree, tmpDir: hiddenTemp(), network: true, homes: [home] });
    expect(layout.hiddenDirs).not.toContain(path.join(home, '.aws'));
  });

  it('docs/sandbox.md names every hidden path', () => {
    const docs = readFileSync(path.join(PROJECT_ROOT, 'docs/sandbox.md'), 'utf8');
    const named = [...HIDDEN_IN_HOME, ...NO_NETWORK_HIDDEN, '/run/user', '/run/dbus'];
    expect(named.filter((name) => !docs.includes(`\`${name}\``))).toEqual([]);
    // The sockets are named by their daemon.
    expect(HIDDEN_SYSTEM.filter((p) => !/user|dbus|docker|podman|containerd|snapd/.test(p))).toEqual([]);
  });

  it('within: a path is within itself and its ancestors, not a sibling with the same prefix', () => {
    expect(within('/a/b', '/a')).toBe(true);
    expect(within('/a', '/a')).toBe(true);
    expect(within('/ab', '/a')).toBe(false);
    expect(within('/a/b', '/')).toBe(true);
  });
});

describe('probeBubblewrap', () => {
  it('finds executables on a PATH list, skipping relative entries and plain files', () => {
    const dir = hiddenTemp();
    writeFileSync(path.join(dir, 'plain'), '');
    writeFileSync(path.join(dir, 'tool'), '#!/bin/sh\n');
    chmodSync(path.join(dir, 'tool'), 0o755);
    expect(findExecutable('tool', `relative:${dir}`)).toBe(path.join(dir, 'tool'));
    expect(findExecutable('plain', dir)).toBeUndefined();
    expect(findExecutable('tool', 'relative')).toBeUndefined();
  });

  it('says when bwrap is not installed', async () => {
    const probe = await probeBubblewrap({ searchPath: hiddenTemp() });
    expect(probe).toEqual({ ok: false, reason: 'bwrap was not found on PATH (install the bubblewrap package)' });
  });

  it('a bwrap that cannot make a sandbox gives its own reason, and is asked only once per process', async () => {
    const log = path.join(hiddenTemp(), 'calls');
    const dir = brokenBwrap(log);
    const first = await probeBubblewrap({ searchPath: dir });
    expect(first).toEqual({ ok: false, reason: `${path.join(dir, 'bwrap')} could not make a sandbox: bwrap: setting up uid map: Permission denied` });
    const calls = readFileSync(log, 'utf8');
    expect(await probeBubblewrap({ searchPath: dir })).toEqual(first);
    expect(readFileSync(log, 'utf8')).toBe(calls);
    // --help, then the probe itself with the namespaces and mounts every command gets.
    expect(calls.trim().split('\n')).toHaveLength(2);
    expect(calls).toMatch(/--unshare-user .*--unshare-pid .*--unshare-net .*--ro-bind \/ \/ .*-- true$/m);
  });
});

describe('createSandbox', () => {
  it('none runs commands as they are', async () => {
    const sandbox = await createSandbox({ mode: 'none', worktree: '/nowhere', tmpDir: '/nowhere', network: false });
    expect(sandbox).toBe(NO_SANDBOX);
    expect(sandbox.wrap(['bash', '-c', 'x'], '/')).toEqual(['bash', '-c', 'x']);
  });

  it('auto without a working bubblewrap is none, with a one-line warning that says why', async () => {
    const sandbox = await createSandbox({ mode: 'auto', worktree: hiddenTemp(), tmpDir: hiddenTemp(), network: false, searchPath: brokenBwrap() });
    expect(sandbox.kind).toBe('none');
    expect(sandbox.wrap(['true'], '/')).toEqual(['true']);
    expect(sandbox.warning).toMatch(/^sandbox: none \(bubblewrap does not work here: .*setting up uid map: Permission denied\); commands run unconfined$/);
  });

  it('bwrap without a working bubblewrap is a usage error, never a quiet fallback', async () => {
    const made = createSandbox({ mode: 'bwrap', worktree: hiddenTemp(), tmpDir: hiddenTemp(), network: false, searchPath: brokenBwrap() });
    await expect(made).rejects.toBeInstanceOf(UsageError);
    await expect(made).rejects.toThrow(/bubblewrap does not work on this machine: .*Permission denied/);
  });
});

const probe = await probeBubblewrap();
// The sandbox tests need bubblewrap (.ci/run installs it). Where it cannot work, say so
// loudly; CORRAL_TEST_NO_SANDBOX=1 skips them on purpose.
const skipSandbox = process.env.CORRAL_TEST_NO_SANDBOX === '1';

describe('this machine', () => {
  it.skipIf(skipSandbox)('has a working bubblewrap (set CORRAL_TEST_NO_SANDBOX=1 to skip the sandbox tests)', () => {
    expect(probe).toMatchObject({ ok: true });
  });
});

describe.skipIf(!probe.ok)('a command in the sandbox', () => {
  let repo: string;
  let worktree: string;
  let tmp: string;
  let outside: string;
  let home: string;
  let sandbox: Sandbox;
  let online: Sandbox;
  let server: Server;
  let port: number;
  let connections = 0;

  beforeAll(async () => {
    ({ repo, worktree } = repoAndWorktree());
    tmp = hiddenTemp('corral-sbx-tmp-');
    outside = visibleTemp('corral-sbx-outside-');
    home = visibleTemp('corral-sbx-home-');
    writeFileSync(path.join(home, '.npmrc'), '//registry/:_authToken=secret-token\n');
    mkdirSync(path.join(home, '.ssh'));
    writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'private key\n');
    sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, home });
    online = await createSandbox({ mode: 'auto', worktree, tmpDir: tmp, network: true, home });
    server = createServer((socket) => {
      connections += 1;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  function run(command: string, extra: Partial<RunCommandOptions> = {}) {
    return runCommand({
      command,
      cwd: worktree,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: tmp },
      timeoutMs: 20_000,
      outputCap: 10_000,
      sandbox,
      ...extra,
    });
  }

  it('is bubblewrap, without network unless asked', () => {
    expect([sandbox.kind, sandbox.network]).toEqual(['bwrap', false]);
    expect([online.kind, online.network]).toEqual(['bwrap', true]);
  });

  it('writes the worktree; everything else is read-only', async () => {
    const result = await run(`echo inside > made.txt && cat made.txt; echo x > ${outside}/escaped.txt; echo x > "$HOME/escaped.txt"; true`);
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('inside\n');
    expect(readFileSync(path.join(worktree, 'made.txt'), 'utf8')).toBe('inside\n');
    expect(result.output).toMatch(new RegExp(`${outside}/escaped.txt: Read-only file system`));
    expect(existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(home, 'escaped.txt'))).toBe(false);
  });

  it('has a private /tmp: the run temp dir, at /tmp and at $TMPDIR; the host /tmp is out of view', async () => {
    const secret = hiddenTemp('corral-sbx-host-tmp-');
    writeFileSync(path.join(secret, 'note'), 'host\n');
    const result = await run(`echo a > /tmp/a.txt && echo b > "$TMPDIR/b.txt" && ls /tmp/a.txt "$TMPDIR/a.txt" && cat ${secret}/note`);
    expect(readFileSync(path.join(tmp, 'a.txt'), 'utf8')).toBe('a\n');
    expect(readFileSync(path.join(tmp, 'b.txt'), 'utf8')).toBe('b\n');
    expect(result.output).toContain(`${secret}/note: No such file or directory`);
    expect(existsSync('/tmp/a.txt') && readFileSync('/tmp/a.txt', 'utf8') === 'a\n').toBe(false);
  });

  it('keeps git metadata read-only: the worktree .git file, its gitdir and the common dir; git still reads', async () => {
    const gitdir = path.join(repo, '.git', 'worktrees', 'wt');
    const config = readFileSync(path.join(repo, '.git', 'config'), 'utf8');
    const dotGit = readFileSync(path.join(worktree, '.git'), 'utf8');
    const result = await run(
      [
        'echo "gitdir: /nowhere" > .git',
        `echo "[alias] x = !true" >> ${repo}/.git/config`,
        `echo x > ${repo}/.git/hooks/post-checkout`,
        `echo x > ${gitdir}/HEAD`,
        'git status --porcelain && echo STATUS-OK',
        'echo new > new.txt && git add new.txt && echo ADDED',
      ].join('; '),
    );
    expect(result.output.match(/Read-only file system/g)?.length).toBeGreaterThanOrEqual(4);
    expect(result.output).toContain('STATUS-OK');
    expect(result.output).not.toContain('ADDED');
    expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).toBe(config);
    expect(readFileSync(path.join(worktree, '.git'), 'utf8')).toBe(dotGit);
    expect(existsSync(path.join(repo, '.git', 'hooks', 'post-checkout'))).toBe(false);
  });

  it('has no network unless the ticket allows it', async () => {
    const before = connections;
    const offline = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`);
    expect(offline.output).not.toContain('CONNECTED');
    expect(connections).toBe(before);
    const connected = await run(`exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED`, { sandbox: online });
    expect(connected.output).toContain('CONNECTED');
    await vi.waitFor(() => expect(connections).toBe(before + 1));
  });

  it('sees and signals only its own processes, with no capabilities even as root', async () => {
    let sleeper: ChildProcess | undefined;
    try {
      sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
      const result = await run(`kill ${sleeper.pid} && echo KILLED; ls /proc | grep -c '^[0-9]'; grep CapEff /proc/self/status; cat /proc/$PPID/environ | tr '\\0' '\\n' | grep -c VITEST`);
      expect(result.output).not.toContain('KILLED');
      expect(await isAlive(sleeper.pid!)).toBe(true);
      const [, processes, caps, vitestVars] = /(\d+)\nCapEff:\s*(\w+)\n(\d+)/.exec(result.output) ?? [];
      // bwrap's init, bash, ls and grep of the pipeline, and no more.
      expect(Number(processes)).toBeLessThan(8);
      expect(caps).toBe('0000000000000000');
      expect(vitestVars).toBe('0');
    } finally {
      sleeper?.kill('SIGKILL');
    }
  });

  it('sees exactly the environment it was given', async () => {
    const result = await run('env', { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CORRAL_PROBE: 'yes' } });
    const names = result.output.trim().split('\n').map((line) => line.split('=')[0]);
    expect(new Set(names)).toEqual(new Set(['PATH', 'CORRAL_PROBE', 'PWD', 'SHLVL', '_']));
  });

  it('does not see the credentials in its home', async () => {
    const result = await run('cat "$HOME/.npmrc"; ls -A "$HOME/.ssh"; echo x > "$HOME/.npmrc"; echo END');
    expect(result.output).toBe('END\n');
    expect(readFileSync(path.join(home, '.npmrc'), 'utf8')).toBe('//registry/:_authToken=secret-token\n');
  });

  it('keeps the process runner: exit codes, stdin input, stderr apart, output cap', async () => {
    expect((await run('exit 3')).exitCode).toBe(3);
    expect(await run('cat; echo done', { input: 'in\n' })).toMatchObject({ exitCode: 0, output: 'in\ndone\n' });
    expect(await run('echo out; echo err >&2', { separateStderr: true })).toMatchObject({ stdout: 'out\n', stderr: 'err\n' });
    const flood = await run("head -c 100000 /dev/zero | tr '\\0' a", { outputCap: 1_000 });
    expect(flood.totalBytes).toBe(100_000);
    expect(flood.output.length).toBeLessThan(1_100);
  });

  /** Host pids of the processes `sleep <seconds>`, a count no other process uses. */
  function sleepsOf(seconds: string): number[] {
    const ps = execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' });
    return ps
      .split('\n')
      .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null && m[2] === `sleep ${seconds}`)
      .map((m) => Number(m[1]));
  }

  /** A sleep that can be told apart from every other: `sleep 1000.<random digits>`. */
  const uniqueSleep = (): string => `1000.${Math.floor(Math.random() * 1e9)}`;

  it('a timeout kills everything the command started: a grandchild, and one that left the session', async () => {
    const [bg, detached] = [uniqueSleep(), uniqueSleep()];
    const running = run(`sleep ${bg} & setsid sleep ${detached} & sleep 1000`, { timeoutMs: 1_500 });
    await vi.waitFor(() => expect(sleepsOf(bg).length + sleepsOf(detached).length).toBe(2), { timeout: 10_000 });
    expect(await running).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true });
    await vi.waitFor(() => expect([...sleepsOf(bg), ...sleepsOf(detached)]).toEqual([]), { timeout: 10_000 });
  });

  it('an abort kills it too', async () => {
    const bg = uniqueSleep();
    const killer = new AbortController();
    const running = run(`sleep ${bg} & sleep 1000`, { signal: killer.signal });
    await vi.waitFor(() => expect(sleepsOf(bg)).toHaveLength(1), { timeout: 10_000 });
    killer.abort();
    expect(await running).toMatchObject({ exitCode: null, aborted: true });
    await vi.waitFor(() => expect(sleepsOf(bg)).toEqual([]), { timeout: 10_000 });
  });

  it('a backgrounded grandchild ends with the command, without holding the call', async () => {
    const bg = uniqueSleep();
    const result = await run(`sleep ${bg} & echo started`);
    expect(result).toMatchObject({ exitCode: 0, output: 'started\n' });
    expect(result.durationMs).toBeLessThan(2_000);
    await vi.waitFor(() => expect(sleepsOf(bg)).toEqual([]), { timeout: 10_000 });
  });

  it('dies with corral: a killed parent takes the whole sandbox with it', async () => {
    const token = uniqueSleep();
    const argv = sandbox.wrap(['bash', '-c', `sleep ${token} & sleep 1000`], worktree);
    // A stand-in for corral: starts the sandbox the way runCommand does, then is killed.
    const parent = spawn(process.execPath, ['-e', `const [f, ...a] = JSON.parse(process.argv[1]); require('child_process').spawn(f, a, { detached: true, stdio: 'ignore' }); setInterval(() => {}, 1000);`, JSON.stringify(argv)], { stdio: 'ignore' });
    try {
      await vi.waitFor(() => expect(sleepsOf(token)).toHaveLength(1), { timeout: 10_000 });
    } finally {
      parent.kill('SIGKILL');
    }
    await vi.waitFor(() => expect(sleepsOf(token)).toEqual([]), { timeout: 10_000 });
  });
});
