import { execFileSync } from 'node:child_process';
import { readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { runCli, runReport } from '../support/cli.js';
import { repoWithFiles } from '../support/repo.js';

// One bubblewrap per run, through the real CLI: setup runs in a sandbox of its own (the
// network, the package cache), the agent's Bash calls and the checks share another; with
// `sandbox.per_command` each command gets its own, as before. A supervisor killed mid-run
// ends the run as an internal error (exit 70) that says so, never a hang.

const probe = await probeBubblewrap();

/**
 * Each line: the PID and network namespaces a command ran in, what that PID namespace's
 * PID 1 is, and the command's own pid there (pids only grow in one namespace; namespace
 * ids are reused once one is gone).
 */
const NS_SCRIPT = 'echo "$(readlink /proc/self/ns/pid) $(readlink /proc/self/ns/net) $(cut -d" " -f2 /proc/1/stat) $$" >> "${1:-ns.txt}"\n';

function repo(extra: Record<string, string> = {}): string {
  return repoWithFiles(
    {
      'ns.sh': NS_SCRIPT,
      'ticket.yaml': ['task: say where commands run', 'allow: ["**"]', 'setup: [bash ns.sh setup.txt]', 'checks: [bash ns.sh]', 'model: replay:replay.yaml', ''].join('\n'),
      // The ticket's own check, so the guard lets the calls run.
      'replay.yaml': 'turns:\n  - tools:\n      - Bash: {command: bash ns.sh}\n  - tools:\n      - Bash: {command: bash ns.sh}\n  - text: Done.\n',
      ...extra,
    },
    'corral-supervisor-',
  );
}

/** The lines a file gained, as the run's patch has them. */
function added(patchFile: string, file: string): string[] {
  const section = readFileSync(patchFile, 'utf8')
    .split('diff --git')
    .find((part) => part.includes(`b/${file}`));
  if (!section) throw new Error(`no ${file} in the patch`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('+') && !line.startsWith('+++'))
    .map((line) => line.slice(1));
}

describe.skipIf(!probe.ok)('one bubblewrap per run through the CLI', () => {
  it('runs the Bash calls and the check in one sandbox, and setup in another', async () => {
    const dir = repo();
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: dir, env: { CI: 'true' }, timeoutMs: 120_000 });
    const report = runReport(run.stdout);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    expect(report.sandbox).toBe('bwrap');
    const commands = added(report.patch, 'ns.txt').map(fields);
    expect(commands).toHaveLength(3);
    // One namespace, one supervisor, a fresh pid for each command.
    expect(new Set(commands.map((c) => `${c.pidNs} ${c.netNs} ${c.init}`)).size).toBe(1);
    expect(commands[0]!.init).toBe('(perl)');
    expect(commands.map((c) => c.pid)).toEqual([...commands.map((c) => c.pid)].sort((a, b) => a - b));
    expect(new Set(commands.map((c) => c.pid)).size).toBe(3);
    expect(commands[0]!.netNs).not.toBe(hostNetNs);
    // Setup's: with the host's network, so another bubblewrap.
    const [setup] = added(report.patch, 'setup.txt').map(fields);
    expect(setup).toMatchObject({ init: '(perl)', netNs: hostNetNs });
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((event) => event.type === 'sandbox')).not.toHaveProperty('perCommand');
  });

  it('with sandbox.per_command in corral.yaml, gives each command a bubblewrap of its own', async () => {
    const dir = repo({ 'corral.yaml': 'sandbox: {mode: bwrap, per_command: true}\n' });
    const config = await runCli(['config'], { cwd: dir });
    expect(config.stdout).toMatch(/sandbox\.per_command +true +← project corral\.yaml:1/);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: dir, env: { CI: 'true' }, timeoutMs: 120_000 });
    const report = runReport(run.stdout);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    const lines = [...added(report.patch, 'setup.txt'), ...added(report.patch, 'ns.txt')].map(fields);
    expect(lines).toHaveLength(4);
    // bubblewrap's own init as PID 1, and each command the first process after it: a namespace each.
    for (const line of lines) expect(line).toMatchObject({ init: '(bwrap)', pid: 2 });
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((event) => event.type === 'sandbox')).toMatchObject({ kind: 'bwrap', perCommand: true });
  });

  it('a ticket can ask for it too, and a wrong value is a usage error naming the field', async () => {
    const dir = repo();
    const ticket = readFileSync(path.join(dir, 'ticket.yaml'), 'utf8');
    writeFileSync(path.join(dir, 'ticket.yaml'), `${ticket}sandbox: {mode: bwrap, per_command: yes-please}\n`);
    const bad = await runCli(['run', 'ticket.yaml'], { cwd: dir, env: { CI: 'true' } });
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toMatch(/ticket\.yaml:6:\d+: sandbox: /);
    writeFileSync(path.join(dir, 'ticket.yaml'), `${ticket}sandbox: {mode: bwrap, per_command: true}\n`);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: dir, env: { CI: 'true' }, timeoutMs: 120_000 });
    const report = runReport(run.stdout);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    for (const line of added(report.patch, 'ns.txt').map(fields)) expect(line).toMatchObject({ init: '(bwrap)', pid: 2 });
  });

  it('a supervisor killed mid-run ends the run with exit 70 and says why', async () => {
    const token = `1000.${Math.floor(Math.random() * 1e9)}`;
    const dir = repoWithFiles(
      {
        'slow.sh': 'sleep "$SLEEP_TOKEN"\n',
        'ticket.yaml': ['task: wait', 'allow: ["**"]', 'checks: [bash slow.sh]', 'env: [SLEEP_TOKEN]', 'model: replay:replay.yaml', ''].join('\n'),
        'replay.yaml': 'turns:\n  - tools:\n      - Bash: {command: bash slow.sh}\n  - text: Done.\n',
      },
      'corral-supervisor-',
    );
    const running = runCli(['run', 'ticket.yaml', '--json'], { cwd: dir, env: { CI: 'true', SLEEP_TOKEN: token }, timeoutMs: 120_000 });
    // Up from the sleep: bash, the command's own process, the supervisor (whose parent is bwrap).
    const sleeper = await vi.waitFor(
      () => {
        const found = ps().find((p) => p.args === `sleep ${token}`);
        if (found === undefined) throw new Error('the command has not started yet');
        return found;
      },
      { timeout: 60_000, interval: 100 },
    );
    const processes = ps();
    const parentOf = (pid: number): { pid: number; ppid: number; args: string } => {
      const child = processes.find((p) => p.pid === pid);
      const parent = processes.find((p) => p.pid === child?.ppid);
      if (parent === undefined || parent.pid <= 1) throw new Error(`no bubblewrap above process ${pid}`);
      return parent;
    };
    let supervisor = parentOf(sleeper.pid);
    while (!/^\S*bwrap /.test(parentOf(supervisor.pid).args)) supervisor = parentOf(supervisor.pid);
    expect(supervisor.args).toMatch(/^\S*perl -e /);
    process.kill(supervisor.pid, 'SIGKILL');
    const run = await running;
    expect(run.exitCode, run.stderr).toBe(70);
    const report = runReport(run.stdout);
    expect(report.status).toBe('internal_error');
    expect(report.reason).toMatch(/^the sandbox of the run's commands \(bubblewrap with its supervisor\) ended unexpectedly \(exit 137\)/);
    expect(ps().some((p) => p.args === `sleep ${token}`)).toBe(false);
  });
});

const hostNetNs = readlinkSync('/proc/self/ns/net');

function fields(line: string): { pidNs: string; netNs: string; init: string; pid: number } {
  const [pidNs = '', netNs = '', init = '', pid = ''] = line.split(' ');
  return { pidNs, netNs, init, pid: Number(pid) };
}

function ps(): { pid: number; ppid: number; args: string }[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ pid: Number(m[1]), ppid: Number(m[2]), args: m[3]! }));
}
