import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, appendFileSync, chmodSync, constants, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// The sandbox through the real CLI: code the agent writes and then runs (a Bash call and a
// ticket check) tries to get out — writes outside the worktree, into the host repository's
// git metadata and $HOME, a TCP connection, a signal to a process outside, corral's own
// environment — and fails at each, while its writes in the worktree land and the run
// passes. The same script with `sandbox: none`, in a throwaway repository, gets out.

interface Report {
  status: string;
  sandbox?: string;
  exitCode: number;
  reason: string;
  warnings: string[];
  patch: string;
  trace: string;
}

type TraceEvent = Record<string, unknown> & { type: string };

const ESCAPE_SCRIPT = readFileSync(path.join(PROJECT_ROOT, 'fixtures/sandbox/escape.sh'), 'utf8');
const ATTEMPTS = ['write-outside', 'git-hook', 'git-config', 'home', 'network', 'signal', 'corral-environment', 'home-credentials', 'git-config-token'];
const FAKE_TOKEN = 'CORRAL_FAKE_TOKEN';

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A temp dir the sandbox can see, read-only: /var/tmp where it is writable (the
 * sandbox's /tmp is private, so a dir under /tmp would only be out of view).
 */
function visibleTemp(prefix: string): string {
  try {
    accessSync('/var/tmp', constants.W_OK);
  } catch {
    return tempDir(prefix);
  }
  const dir = realpathSync(mkdtempSync(path.join('/var/tmp', prefix)));
  made.push(dir);
  return dir;
}

function ticketFiles(sandbox: string): Record<string, string> {
  return {
    'ticket.yaml': [
      'task: run the escape script',
      'allow: [escape.sh, escape-results.txt, inside.txt]',
      // Setup commands are trusted, and sandboxed all the same.
      `setup: ["sh -c 'echo escaped > \\"\${ESCAPE_OUTSIDE:?}/from-setup.txt\\"' || true"]`,
      'checks: [bash escape.sh]',
      'env: [ESCAPE_OUTSIDE, ESCAPE_REPO, ESCAPE_PORT, ESCAPE_PID]',
      `sandbox: ${sandbox}`,
      'model: replay:replay.yaml',
      '',
    ].join('\n'),
    'replay.yaml': [
      'turns:',
      '  - tools:',
      `      - Write: {file_path: escape.sh, content: ${JSON.stringify(ESCAPE_SCRIPT)}}`,
      // The ticket's own check, so the guard lets it run; what it does is out of its sight.
      '      - Bash: {command: bash escape.sh}',
      '  - text: Done.',
      '',
    ].join('\n'),
  };
}

/** The lines of escape-results.txt as the patch adds them. */
function resultsInPatch(patchFile: string): string[] {
  const patch = readFileSync(patchFile, 'utf8');
  const section = patch.split('diff --git').find((part) => part.includes('b/escape-results.txt'));
  if (!section) throw new Error(`no escape-results.txt in the patch:\n${patch}`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
    .map((line) => line.slice(1));
}

function trace(file: string): TraceEvent[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TraceEvent);
}

interface Targets {
  repo: string;
  outside: string;
  home: string;
  sleeper: ChildProcess;
  config: string;
}

const probe = await probeBubblewrap();

describe('the sandbox through the CLI', () => {
  let server: Server;
  let port: number;
  let connections = 0;
  const sleepers: ChildProcess[] = [];

  beforeAll(async () => {
    server = createServer((socket) => {
      connections += 1;
      socket.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const sleeper of sleepers) sleeper.kill('SIGKILL');
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  /** A repository with the escape ticket, and the things outside it that the script goes after. */
  function setUp(sandbox: string): Targets {
    const repo = repoWithFiles(ticketFiles(sandbox), 'corral-sandbox-');
    // What actions/checkout leaves in a repository's config, and a URL with a password.
    appendFileSync(
      path.join(repo, '.git', 'config'),
      `[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${FAKE_TOKEN}\n[remote "origin"]\n\turl = https://x-access-token:${FAKE_TOKEN}@example.com/r.git\n`,
    );
    // A home with the credentials real ones keep.
    const home = visibleTemp('corral-home-');
    for (const [file, content] of Object.entries({
      '.claude/.credentials.json': `{"accessToken":"${FAKE_TOKEN}"}`,
      '.config/gh/hosts.yml': `github.com:\n  oauth_token: ${FAKE_TOKEN}\n`,
      '.cargo/credentials.toml': `[registry]\ntoken = "${FAKE_TOKEN}"\n`,
      '.gitconfig': `[http]\n\textraheader = AUTHORIZATION: basic ${FAKE_TOKEN}\n`,
      '.vault-token': FAKE_TOKEN,
      // What only the real home holds: the private one the sandbox shows in its place is empty.
      '.real-home': 'yes\n',
    })) {
      mkdirSync(path.dirname(path.join(home, file)), { recursive: true });
      writeFileSync(path.join(home, file), content);
    }
    const sleeper = spawn('sleep', ['1000'], { stdio: 'ignore' });
    sleepers.push(sleeper);
    return { repo, outside: visibleTemp('corral-outside-'), home, sleeper, config: readFileSync(path.join(repo, '.git', 'config'), 'utf8') };
  }

  /** What the script needs, and no more; every target is one this test made. */
  function escapeEnv(t: Targets): Record<string, string> {
    return {
      HOME: t.home,
      ESCAPE_OUTSIDE: t.outside,
      ESCAPE_REPO: t.repo,
      ESCAPE_PORT: String(port),
      ESCAPE_PID: String(t.sleeper.pid),
      // Given to corral only, never to a tool: only corral's own /proc entry shows it.
      ESCAPE_HOST_ONLY: 'corral-process-only',
    };
  }

  async function runEscape(t: Targets, extraEnv: Record<string, string> = {}) {
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: t.repo, env: { ...escapeEnv(t), ...extraEnv } });
    let report: Report;
    try {
      report = runReport(run.stdout) as Report;
    } catch {
      throw new Error(`no JSON report (exit ${run.exitCode}):\n${run.stdout}\n${run.stderr}`);
    }
    return { run, report };
  }

  it.skipIf(!probe.ok)('with bubblewrap, every attempt to get out fails, the worktree writes land and the run passes', async () => {
    const t = setUp('bwrap');
    const before = connections;
    const { run, report } = await runEscape(t);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    expect(report.status).toBe('passed');
    expect(report.sandbox).toBe('bwrap');
    expect(report.warnings.filter((w) => w.startsWith('sandbox'))).toEqual([]);

    // Once through the agent's Bash call, once through the check: blocked every time.
    const blocked = ['== run', ...ATTEMPTS.map((a) => `${a} blocked`), 'toolchains ok', 'worktree-write ok'];
    expect(resultsInPatch(report.patch)).toEqual([...blocked, ...blocked]);
    expect(readFileSync(report.patch, 'utf8')).toContain('+++ b/inside.txt');

    // And the world outside says the same.
    expect(existsSync(path.join(t.outside, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(t.outside, 'from-setup.txt'))).toBe(false);
    expect(existsSync(path.join(t.repo, '.git', 'hooks', 'post-checkout'))).toBe(false);
    expect(readFileSync(path.join(t.repo, '.git', 'config'), 'utf8')).toBe(t.config);
    expect(existsSync(path.join(t.home, 'escaped.txt'))).toBe(false);
    expect(connections).toBe(before);
    expect([t.sleeper.exitCode, t.sleeper.signalCode]).toEqual([null, null]);

    const events = trace(report.trace);
    expect(events.find((e) => e.type === 'sandbox')).toMatchObject({ kind: 'bwrap', network: false });
  });

  it('with sandbox: none, the same script gets out (in a throwaway repository)', async () => {
    const t = setUp('none');
    const before = connections;
    const { report } = await runEscape(t);
    // The host repository's config and hooks changed under the run, which the fence may
    // report (exit 2); the point here is what the script could do.
    expect(['passed', 'fence_violated']).toContain(report.status);
    const [firstRun] = resultsInPatch(report.patch).join('\n').split('== run\n').filter(Boolean);
    expect(firstRun!.trim().split('\n')).toEqual([...ATTEMPTS.map((a) => `${a} escaped`), 'toolchains ok', 'worktree-write ok']);

    expect(readFileSync(path.join(t.outside, 'escaped.txt'), 'utf8')).toBe('escaped\n');
    expect(readFileSync(path.join(t.outside, 'from-setup.txt'), 'utf8')).toBe('escaped\n');
    expect(existsSync(path.join(t.repo, '.git', 'hooks', 'post-checkout'))).toBe(true);
    expect(readFileSync(path.join(t.repo, '.git', 'config'), 'utf8')).toContain('owned = !echo owned');
    expect(readFileSync(path.join(t.home, 'escaped.txt'), 'utf8')).toBe('escaped\n');
    expect(connections).toBeGreaterThan(before);
    expect(t.sleeper.signalCode).toBe('SIGTERM');
    expect(trace(report.trace).find((e) => e.type === 'sandbox')).toMatchObject({ kind: 'none' });
  });

  describe('where bubblewrap does not work', () => {
    /** A `bwrap` first on PATH that fails the way one without user namespaces does. */
    function brokenBwrapPath(): string {
      const dir = tempDir('corral-fake-bwrap-');
      writeFileSync(path.join(dir, 'bwrap'), "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n");
      chmodSync(path.join(dir, 'bwrap'), 0o755);
      return `${dir}:${process.env.PATH ?? '/usr/bin:/bin'}`;
    }

    it('sandbox: bwrap stops before anything runs, exit 64 with the reason', async () => {
      const t = setUp('bwrap');
      const run = await runCli(['run', 'ticket.yaml'], { cwd: t.repo, env: { PATH: brokenBwrapPath(), ESCAPE_OUTSIDE: t.outside } });
      expect(run.exitCode, run.stdout + run.stderr).toBe(64);
      expect(run.stderr).toMatch(/ticket\.yaml:1:1: sandbox: bwrap: bubblewrap does not work on this machine: .*bwrap could not make a sandbox: bwrap: setting up uid map: Permission denied/);
      expect(existsSync(path.join(t.outside, 'from-setup.txt'))).toBe(false);
      expect(existsSync(path.join(t.repo, '.corral'))).toBe(false);
    });

    it('sandbox: auto runs unconfined, and says so in the summary and the trace', async () => {
      const t = setUp('auto');
      const { report } = await runEscape(t, { PATH: brokenBwrapPath() });
      const warning = report.warnings.find((w) => w.startsWith('sandbox: none'));
      expect(warning).toMatch(/^sandbox: none \(bubblewrap does not work here: .*Permission denied\); commands run unconfined$/);
      expect(trace(report.trace).find((e) => e.type === 'sandbox')).toEqual(expect.objectContaining({ kind: 'none', warning }));
      // Unconfined indeed: the setup command wrote outside.
      expect(existsSync(path.join(t.outside, 'from-setup.txt'))).toBe(true);

      const human = await runCli(['run', 'ticket.yaml'], { cwd: t.repo, env: { ...escapeEnv(t), PATH: brokenBwrapPath(), NO_COLOR: '1' } });
      expect(human.stdout).toMatch(/warning +sandbox: none \(bubblewrap does not work here: .*\); commands run unconfined/);
    });
  });
});
