import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { bwrapArgv, type BwrapLayout } from '../../src/guard/sandbox/bwrap-argv.js';
import { HIDDEN_IN_HOME, HIDDEN_SYSTEM, NO_NETWORK_HIDDEN, passwdHome, sandboxLayout, within } from '../../src/guard/sandbox/layout.js';
import { findExecutable } from '../../src/proc/find-executable.js';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { createSandbox, NO_SANDBOX, type Sandbox } from '../../src/guard/sandbox/sandbox.js';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { buildToolEnv } from '../../src/run/tool-env.js';
import { runCommand, type RunCommandOptions } from '../../src/proc/run-command.js';
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
  covers: [{ target: '/home/u', source: '/tmp/corral-tmp-1/.corral-sandbox-x/home' }, { target: '/srv/repo' }, { target: '/srv/repo/.git' }, { target: '/tmp/.corral-sandbox-x' }],
  readViews: [{ source: '/home/u/.pyenv', target: '/home/u/.pyenv' }, { source: '/srv/repo/.git/objects', target: '/srv/repo/.git/objects' }],
  readOnly: ['/tmp/corral-t-1/wt/.git'],
  writable: [{ source: '/tmp/corral-tmp-1/.corral-sandbox-x/git', target: '/srv/repo/.git/worktrees/wt' }],
  hiddenDirs: ['/run'],
  hiddenFiles: ['/home/u/.pyenv/credentials', '/tmp/corral-t-1/wt/.env'],
  network: false,
  disableUserns: true,
};

describe('bwrapArgv', () => {
  it('builds every namespace and mount in order: each after the folders that hold it, masks last, covers read-only at the end', () => {
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
      // Depth 1: the private /tmp; depth 2: the home (the private one in its place), the
      // host checkout, the private dir's place in /tmp, the temp dir at its own path.
      '--bind', '/tmp/corral-tmp-1', '/tmp',
      '--bind', '/tmp/corral-tmp-1/.corral-sandbox-x/home', '/home/u',
      '--tmpfs', '/srv/repo',
      '--tmpfs', '/tmp/.corral-sandbox-x',
      '--bind', '/tmp/corral-tmp-1', '/tmp/corral-tmp-1',
      // Depth 3: the host .git, the worktree, a toolchain under the home.
      '--tmpfs', '/srv/repo/.git',
      '--bind', '/tmp/corral-t-1/wt', '/tmp/corral-t-1/wt',
      '--ro-bind', '/home/u/.pyenv', '/home/u/.pyenv',
      // Depth 4: back into the covered host .git, the object store; the worktree's .git
      // file read-only over the writable worktree; the private gitdir.
      '--ro-bind', '/srv/repo/.git/objects', '/srv/repo/.git/objects',
      '--ro-bind', '/tmp/corral-t-1/wt/.git', '/tmp/corral-t-1/wt/.git',
      '--bind', '/tmp/corral-tmp-1/.corral-sandbox-x/git', '/srv/repo/.git/worktrees/wt',
      '--tmpfs', '/run', '--remount-ro', '/run',
      '--dev-bind', '/dev/null', '/home/u/.pyenv/credentials',
      '--dev-bind', '/dev/null', '/tmp/corral-t-1/wt/.env',
      // Not the private home: the run's own, writable (tools keep caches there).
      '--remount-ro', '/srv/repo',
      '--remount-ro', '/srv/repo/.git',
      '--remount-ro', '/tmp/.corral-sandbox-x',
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
    const argv = bwrapArgv({ ...LAYOUT, tmpDir: '/tmp' }, ['true'], '/').join(' ');
    expect(argv.match(/--bind \/tmp \/tmp /g)).toHaveLength(1);
    expect(argv).not.toContain('/tmp/corral-tmp-1 ');
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

  it('hides the whole home (the given one and the passwd one), and /run without network', () => {
    const home = visibleTemp('corral-sbx-home-');
    mkdirSync(path.join(home, '.ssh'));
    writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'key\n');
    writeFileSync(path.join(home, '.npmrc'), '//registry/:_authToken=t\n');
    const worktree = hiddenTemp();
    const layout = sandboxLayout({ bwrap: 'b', disableUserns: true, worktree, tmpDir: hiddenTemp(), network: false, homes: [home] });
    const covered = layout.covers.map((c) => c.target);
    if (!within(home, '/tmp')) expect(covered).toContain(home);
    const own = passwdHome();
    if (own && own !== '/' && existsSync(own) && !within(realpathSync(own), '/tmp')) expect(covered).toContain(realpathSync(own));
    // Covered whole: nothing inside needs hiding by name.
    expect([...layout.hiddenDirs, ...layout.hiddenFiles].filter((p) => within(p, home))).toEqual([]);
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
  it('none runs commands as they are, through one supervisor where perl is a child subreaper', async () => {
    const sandbox = await createSandbox({ mode: 'none', worktree: '/nowhere', tmpDir: '/nowhere', network: false });
    expect(sandbox).toMatchObject({ kind: 'none', network: true, masked: [], exposed: [] });
    expect(sandbox.wrap(['bash', '-c', 'x'], '/')).toEqual(['bash', '-c', 'x']);
    expect(sandbox.supervised).toBe((await findSubreaper()).kind === 'perl');
    expect(NO_SANDBOX.supervised).toBe(false);
    await sandbox.close();
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
// The sandbox tests need bubblewrap (.ci/run installs it). A machine without it skips
// them and says so; one where it is installed but cannot work fails loudly, unless
// CORRAL_TEST_NO_SANDBOX=1 skips them on purpose.
const installed = findExecutable('bwrap', process.env.PATH ?? '') !== undefined;
const skipSandbox = process.env.CORRAL_TEST_NO_SANDBOX === '1' || !installed;
if (!probe.ok) process.stderr.write(`sandbox tests skipped: ${installed ? probe.reason : 'bubblewrap is not installed (apt-get install bubblewrap)'}\n`);

describe.skipIf(!probe.ok)('the setup sandbox', () => {
  it('has the network unless turned off, and its package cache is writable; the agent\'s sandbox has neither', async () => {
    const { worktree } = repoAndWorktree();
    const tmp = hiddenTemp('corral-sbx-tmp-');
    const cache = hiddenTemp('corral-sbx-cache-');
    const sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, setupWritable: [cache] });
    const setup = sandbox.setup.wrap(['true'], worktree).join(' ');
    const agent = sandbox.wrap(['true'], worktree).join(' ');
    expect(sandbox.setup.network).toBe(true);
    expect(setup).not.toContain('--unshare-net');
    expect(setup).toContain(`--bind ${cache} ${cache}`);
    expect(agent).toContain('--unshare-net');
    expect(agent).not.toContain(cache);
    const offline = await createSandbox({ mode: 'bwrap', worktree, tmpDir: hiddenTemp(), network: false, setupNetwork: false });
    expect(offline.setup.network).toBe(false);
    expect(offline.setup.wrap(['true'], worktree)).toContain('--unshare-net');
  });
});

describe('this machine', () => {
  it.skipIf(skipSandbox)('has a working bubblewrap, as it has one installed (set CORRAL_TEST_NO_SANDBOX=1 to skip the sandbox tests)', () => {
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

  it('keeps the host git metadata out of reach: the worktree .git file read-only, the host .git neither writable nor readable but its objects; git works on a private copy', async () => {
    const gitdir = path.join(repo, '.git', 'worktrees', 'wt');
    const config = readFileSync(path.join(repo, '.git', 'config'), 'utf8');
    const dotGit = readFileSync(path.join(worktree, '.git'), 'utf8');
    const head = readFileSync(path.join(gitdir, 'HEAD'), 'utf8');
    const result = await run(
      [
        `grep repositoryformatversion ${repo}/.git/config && echo READ-HOST-CONFIG`,
        'echo "gitdir: /nowhere" > .git',
        `echo "[alias] x = !true" >> ${repo}/.git/config`,
        `echo x > ${repo}/.git/hooks/post-checkout`,
        `ls ${repo}/.git/objects >/dev/null && echo OBJECTS-VISIBLE`,
        'git status --porcelain && echo STATUS-OK',
        'echo new > new.txt && git add new.txt && echo ADDED',
      ].join('; '),
    );
    expect(result.output).toMatch(/\.git: Read-only file system/);
    expect(result.output).toContain('STATUS-OK');
    expect(result.output).toContain('OBJECTS-VISIBLE');
    expect(result.output).not.toContain('READ-HOST-CONFIG');
    expect(result.output).toContain('ADDED');
    expect(readFileSync(path.join(repo, '.git', 'config'), 'utf8')).toBe(config);
    expect(readFileSync(path.join(worktree, '.git'), 'utf8')).toBe(dotGit);
    expect(readFileSync(path.join(gitdir, 'HEAD'), 'utf8')).toBe(head);
    expect(existsSync(path.join(repo, '.git', 'hooks', 'post-checkout'))).toBe(false);
    // The harness's git still sees the worktree as it was made: nothing staged.
    expect(git(worktree, ['status', '--porcelain'])).toContain('?? new.txt');
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
      const result = await run(`kill ${sleeper.pid} && echo KILLED; ls /proc | grep -c '^[0-9]'; grep CapEff /proc/self/status; cat /proc/$PPID/environ 2>/dev/null | tr '\\0' '\\n' | grep -c VITEST`);
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

  it('does not see the credentials in its home, and cannot write there', async () => {
    const result = await run('cat "$HOME/.npmrc"; ls -A "$HOME/.ssh"; echo x > "$HOME/.npmrc"; echo END');
    expect(result.output).not.toContain('secret-token');
    expect(result.output).not.toContain('id_ed25519');
    expect(result.output).toContain('END\n');
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

describe.skipIf(!probe.ok)('secrets in the sandbox', () => {
  const TOKEN = `tok-${Math.random().toString(36).slice(2)}`;
  let repo: string;
  let worktree: string;
  let tmp: string;
  let home: string;
  let searchPath: string;
  let sandbox: Sandbox;
  let hostGitBefore: Map<string, string>;

  /** Every file of the host repository's .git and its content, to compare after. */
  function snapshot(dir: string): Map<string, string> {
    const files = new Map<string, string>();
    const walk = (d: string): void => {
      for (const entry of readdirSync(d, { withFileTypes: true })) {
        const full = path.join(d, entry.name);
        if (entry.isDirectory()) walk(full);
        else files.set(path.relative(dir, full), readFileSync(full, 'base64'));
      }
    };
    walk(dir);
    return files;
  }

  function put(file: string, content: string, mode = 0o644): void {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, content, { mode });
  }

  beforeAll(async () => {
    // A home full of the credentials real machines keep, and toolchains on PATH in it.
    home = visibleTemp('corral-sbx-home-');
    put(path.join(home, '.claude', '.credentials.json'), `{"token":"${TOKEN}"}`);
    put(path.join(home, '.codex', 'auth.json'), `{"token":"${TOKEN}"}`);
    put(path.join(home, '.gitconfig'), `[user]\n\tname = Home User\n\temail = home@example.com\n[credential]\n\thelper = store\n[http]\n\textraheader = AUTHORIZATION: basic ${TOKEN}\n`);
    put(path.join(home, '.config', 'git', 'credentials'), `https://u:${TOKEN}@example.com\n`);
    put(path.join(home, '.config', 'gh', 'hosts.yml'), `github.com:\n  oauth_token: ${TOKEN}\n`);
    put(path.join(home, '.cargo', 'credentials.toml'), `[registry]\ntoken = "${TOKEN}"\n`);
    put(path.join(home, '.cargo', 'bin', 'corral-cargo-tool'), '#!/bin/sh\necho cargo-tool-ran\n', 0o755);
    put(path.join(home, '.vault-token'), TOKEN);
    put(path.join(home, '.terraform.d', 'credentials.tfrc.json'), `{"token":"${TOKEN}"}`);
    put(path.join(home, '.m2', 'settings.xml'), `<password>${TOKEN}</password>`);
    put(path.join(home, '.local', 'bin', 'corral-local-tool'), '#!/bin/sh\necho local-tool-ran\n', 0o755);
    put(path.join(home, '.local', 'share', 'keyrings', 'login.keyring'), TOKEN);
    put(path.join(home, '.nvm', 'versions', 'node', 'v1', 'bin', 'corral-node-tool'), '#!/bin/sh\necho node-tool-ran\n', 0o755);
    put(path.join(home, '.nvm', 'versions', 'node', 'v1', 'etc', 'npmrc'), `//registry/:_authToken=${TOKEN}\n`);
    put(path.join(home, '.cache', 'ms-playwright', 'chromium', 'VERSION'), 'browser-visible\n');
    searchPath = [path.join(home, '.local', 'bin'), path.join(home, '.cargo', 'bin'), path.join(home, '.nvm', 'versions', 'node', 'v1', 'bin'), process.env.PATH ?? '/usr/bin:/bin'].join(':');

    // A host repository where the sandbox could see it, with the credentials actions/checkout leaves.
    repo = visibleTemp('corral-sbx-host-');
    ({ worktree } = repoAndWorktree(repo));
    git(repo, ['config', 'http.https://github.com/.extraheader', `AUTHORIZATION: basic ${TOKEN}`]);
    git(repo, ['remote', 'add', 'origin', `https://x-access-token:${TOKEN}@example.com/r.git`]);
    git(repo, ['config', 'core.fsmonitor', 'echo owned']);
    git(repo, ['config', 'filter.lfs.smudge', 'echo owned']);
    writeFileSync(path.join(repo, '.env'), `HOST_CHECKOUT=${TOKEN}\n`);
    // What setup left in the worktree: secrets, one of them exposed by name.
    writeFileSync(path.join(worktree, '.env'), `API_KEY=${TOKEN}\n`);
    writeFileSync(path.join(worktree, '.env.test'), 'TEST_ONLY=visible\n');
    writeFileSync(path.join(worktree, '.env.example'), 'API_KEY=\n');
    put(path.join(worktree, 'config', 'server.key'), `key ${TOKEN}\n`);
    put(path.join(worktree, 'node_modules', 'pkg', 'test.pem'), 'fixture\n');
    tmp = tempIn(visibleTemp('corral-sbx-run-'), 'tmp-');
    sandbox = await createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, home, searchPath, readPaths: ['~/.cache/ms-playwright'], expose: ['.env.test'] });
    hostGitBefore = snapshot(path.join(repo, '.git'));
  });

  function run(command: string) {
    return runCommand({ command, cwd: worktree, env: { PATH: searchPath, HOME: home, TMPDIR: tmp }, timeoutMs: 30_000, outputCap: 100_000, sandbox });
  }

  it('setup sees the worktree secrets: nothing is masked before the agent phase', async () => {
    expect(sandbox.masked).toEqual([]);
    const result = await run('cat .env');
    expect(result.output).toBe(`API_KEY=${TOKEN}\n`);
  });

  it('finds no credential file under the home, its own or the user\'s, yet the toolchains on PATH and the read folders work', async () => {
    const places = ['.claude/.credentials.json', '.codex/auth.json', '.config/git/credentials', '.config/gh/hosts.yml', '.cargo/credentials.toml', '.vault-token', '.terraform.d/credentials.tfrc.json', '.m2/settings.xml', '.local/share/keyrings/login.keyring', '.nvm/versions/node/v1/etc/npmrc'];
    const own = userInfo().homedir;
    const result = await run(
      [
        ...places.map((place) => `cat "$HOME/${place}"`),
        `grep -rs ${TOKEN} "$HOME" && echo FOUND-IN-HOME`,
        ...(own && own !== '/' ? [`ls -A ${own}`] : []),
        'corral-local-tool',
        'corral-cargo-tool',
        'corral-node-tool',
        'cat "$HOME/.cache/ms-playwright/chromium/VERSION"',
      ].join('; '),
    );
    expect(result.output).not.toContain(TOKEN);
    expect(result.output).not.toContain('FOUND-IN-HOME');
    expect(result.output).toContain('local-tool-ran\ncargo-tool-ran\nnode-tool-ran\nbrowser-visible\n');
    // The user's identity, so `git commit` works; nothing else of the user's git config.
    expect((await run('git config --global --list')).output).toBe('user.name=Home User\nuser.email=home@example.com\n');
    if (own && own !== '/' && realpathSync(own) !== home) {
      const listed = result.output.split('\n');
      for (const credential of ['.claude', '.codex', '.npmrc', '.gitconfig', '.m2', '.config', '.ssh', '.aws']) expect(listed).not.toContain(credential);
    }
  });

  it('runs python3 -c and node -e', async () => {
    const result = await run(`python3 -c 'print(6 * 7)' && node -e 'console.log(6 * 9)'`);
    expect(result).toMatchObject({ exitCode: 0, output: '42\n54\n' });
  });

  it('shows no credential of the host repository config, and runs none of its programs', async () => {
    const result = await run(`git config --list --show-origin; git remote -v; cat ${repo}/.git/config; cat ${repo}/.env; git status --short >/dev/null; echo END`);
    expect(result.output).not.toContain(TOKEN);
    expect(result.output).not.toMatch(/extraheader|fsmonitor|filter\.lfs|owned/);
    expect(result.output).toContain('origin\thttps://example.com/r.git (fetch)');
    expect(result.output).toContain('END');
  });

  it('masks the worktree secrets once the agent phase starts, except those exposed by name', async () => {
    expect(sandbox.maskSecrets()).toEqual({ masked: ['.env', 'config/server.key'], exposed: ['.env.test'] });
    expect([sandbox.masked, sandbox.exposed]).toEqual([['.env', 'config/server.key'], ['.env.test']]);
    const result = await run('cat .env config/server.key .env.test .env.example node_modules/pkg/test.pem; echo x > .env; grep -rs ' + TOKEN + ' . ; echo END');
    expect(result.output).toBe('TEST_ONLY=visible\nAPI_KEY=\nfixture\nEND\n');
    expect(readFileSync(path.join(worktree, '.env'), 'utf8')).toBe(`API_KEY=${TOKEN}\n`);
  });

  it('masks only the secrets still there: a deleted one is not made again', async () => {
    expect(sandbox.masked).toContain('config/server.key');
    rmSync(path.join(worktree, 'config', 'server.key'));
    const result = await run('ls config; echo END');
    expect(result.output).toBe('END\n');
    expect(existsSync(path.join(worktree, 'config', 'server.key'))).toBe(false);
  });

  it("runs the agent's everyday git on a private copy: the host repository and the harness's view stay as they were", async () => {
    const base = git(worktree, ['rev-parse', 'HEAD']).trim();
    const result = await run(
      [
        'set -e',
        'echo change >> a.txt && echo new > b.txt',
        'git add b.txt a.txt && git commit -qm "agent commit"',
        'echo more >> a.txt && git stash -q && git stash list',
        'git log --format=%s',
        'echo again >> a.txt && git diff --stat && git checkout -- a.txt && git restore a.txt && git status --short',
      ].join('\n'),
    );
    expect(result.exitCode, result.output).toBe(0);
    expect(result.output).toContain('stash@{0}');
    expect(result.output).toContain('agent commit\nbase\n');
    expect(result.output).toContain('a.txt | 1 +');
    // Host HEAD, refs, index, objects, config: byte for byte.
    expect(snapshot(path.join(repo, '.git'))).toEqual(hostGitBefore);
    expect(git(worktree, ['rev-parse', 'HEAD']).trim()).toBe(base);
    expect(git(worktree, ['log', '--format=%s'])).toBe('base\n');
    expect(git(worktree, ['status', '--porcelain', '--untracked-files=no'])).toBe(' M a.txt\n');
  });

  it('refuses read folders that are, hold or lie in credential places, and expose names outside the worktree', async () => {
    for (const readPaths of [['~/.ssh'], ['~/.config'], ['~'], ['~/.aws/cli'], ['relative/dir'], [path.dirname(home)]]) {
      await expect(createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, home, readPaths }), readPaths[0]).rejects.toBeInstanceOf(UsageError);
    }
    await expect(createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, home, readPaths: ['~/.config'] })).rejects.toThrow(/sandbox: read: ~\/\.config holds ~\/\.config\/gcloud/);
    await expect(createSandbox({ mode: 'bwrap', worktree, tmpDir: tmp, network: false, home, expose: ['../x'] })).rejects.toThrow(/sandbox: expose: "\.\.\/x" is not a path inside the worktree/);
  });
});

describe('the tools\' git', () => {
  it('finds no bare repository planted in the worktree and runs no fsmonitor, sandbox or not', async () => {
    const dir = hiddenTemp('corral-plant-');
    const planted = path.join(dir, 'src', 'x');
    const marker = path.join(dir, 'marker');
    git(dir, ['init', '-q']);
    git(dir, ['init', '-q', '--bare', planted]);
    writeFileSync(path.join(planted, 'hook'), `#!/bin/sh\necho ran > ${marker}\n`, { mode: 0o755 });
    git(planted, ['config', 'core.fsmonitor', path.join(planted, 'hook')]);
    git(planted, ['config', 'core.bare', 'false']);
    git(planted, ['config', 'core.worktree', path.join(dir, 'src')]);
    const env = buildToolEnv({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_VALUE_0: 'Ticket' }, { GIT_CONFIG_COUNT: true, GIT_CONFIG_KEY_0: true, GIT_CONFIG_VALUE_0: true }, { tmpDir: dir });
    expect(env).toMatchObject({ GIT_CONFIG_COUNT: '3', GIT_CONFIG_KEY_0: 'user.name', GIT_CONFIG_KEY_1: 'safe.bareRepository', GIT_CONFIG_VALUE_1: 'explicit', GIT_CONFIG_KEY_2: 'core.fsmonitor', GIT_CONFIG_VALUE_2: 'false' });
    const result = await runCommand({ command: 'git -C src/x status; git config user.name', cwd: dir, env, timeoutMs: 20_000, outputCap: 10_000 });
    expect(result.output).toContain("cannot use bare repository");
    expect(result.output).toContain('Ticket\n');
    expect(existsSync(marker)).toBe(false);
  });
});
