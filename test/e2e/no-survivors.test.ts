import { execa } from 'execa';
import { existsSync, readdirSync, readFileSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { isAlive } from '../tools/helpers.js';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// Without a sandbox, nothing a run starts outlives it: a script the agent's Bash call and
// the ticket's check run starts daemons every way it can (setsid, setsid -f, a double fork,
// a plain `&`), each writing its pid to a folder outside the worktree; once corral has
// exited, every one of them is dead. Also when corral itself is killed with SIGKILL.

const DAEMON_SCRIPT = [
  'd="$SURVIVOR_PIDS"; run=$$',
  `sleeper='echo $$ > "$0.tmp" && mv "$0.tmp" "$0"; exec sleep 1000'`,
  'setsid sh -c "$sleeper" "$d/$run-setsid" >/dev/null 2>&1 &',
  'setsid -f sh -c "$sleeper" "$d/$run-setsid-f" >/dev/null 2>&1',
  '( setsid sh -c "$sleeper" "$d/$run-double-fork" >/dev/null 2>&1 & ) &',
  'sh -c "$sleeper" "$d/$run-background" >/dev/null 2>&1 &',
  'for name in setsid setsid-f double-fork background; do until [ -s "$d/$run-$name" ]; do sleep 0.05; done; done',
  'if [ -n "$SURVIVOR_LINGER" ]; then echo lingering; sleep 600; fi',
  'echo started',
  '',
].join('\n');

const TICKET = [
  'task: start the daemons',
  'allow: ["**"]',
  'allow_empty: true',
  'checks: [bash daemon.sh]',
  'env: [SURVIVOR_PIDS, SURVIVOR_LINGER]',
  'sandbox: none',
  'model: replay:replay.yaml',
  '',
].join('\n');

// The ticket's own check, so the guard lets the call run; what it starts is out of its sight.
const REPLAY = 'turns:\n  - tools:\n      - Bash: {command: bash daemon.sh}\n  - text: Done.\n';

const reaper = await findSubreaper();
const skipReason = reaper.kind === 'none' ? `no child subreaper works on this machine (${reaper.reason}), so setsid daemons are not contained here` : '';
if (skipReason) console.warn(`skipped: ${skipReason}`);

const pidsSeen: number[] = [];
afterEach(() => {
  // A failing test must not leave its daemons on the machine.
  for (const pid of pidsSeen.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
});

function pidsIn(folder: string): number[] {
  const pids = readdirSync(folder)
    .filter((name) => !name.endsWith('.tmp'))
    .map((name) => Number(readFileSync(path.join(folder, name), 'utf8').trim()));
  pidsSeen.push(...pids);
  return pids;
}

describe.skipIf(skipReason !== '')('no survivors through the CLI (sandbox: none)', () => {
  it('the daemons of the Bash call and of the check are all dead once corral exits', async () => {
    const repo = repoWithFiles({ 'ticket.yaml': TICKET, 'replay.yaml': REPLAY, 'daemon.sh': DAEMON_SCRIPT }, 'corral-survivors-');
    const pids = tempDir('corral-survivor-pids-');
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { SURVIVOR_PIDS: pids } });
    const report = runReport(run.stdout);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    expect(report.status).toBe('passed');
    // Four daemons from the Bash call, four from the check.
    const started = pidsIn(pids);
    expect(started).toHaveLength(8);
    for (const pid of started) expect(await isAlive(pid), `pid ${pid} survived the run`).toBe(false);

    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((event) => event.type === 'sandbox')).toMatchObject({ kind: 'none', reaper: reaper.kind });
    expect(report.warnings.filter((warning: string) => warning.startsWith('processes:'))).toEqual([]);
  });

  it('corral killed with SIGKILL during a Bash call leaves no daemon behind', async () => {
    const repo = repoWithFiles({ 'ticket.yaml': TICKET, 'replay.yaml': REPLAY, 'daemon.sh': DAEMON_SCRIPT }, 'corral-survivors-');
    const pids = tempDir('corral-survivor-pids-');
    const child = execa('node', [path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'run', 'ticket.yaml', '--json'], {
      cwd: repo,
      reject: false,
      stdin: 'ignore',
      env: { NO_COLOR: '1', SURVIVOR_PIDS: pids, SURVIVOR_LINGER: '1' },
    });
    try {
      await vi.waitFor(() => expect(pidsIn(pids)).toHaveLength(4), { timeout: 60_000, interval: 100 });
      child.kill('SIGKILL');
      await child;
      for (const pid of pidsIn(pids)) await vi.waitFor(async () => expect(await isAlive(pid), `pid ${pid} survived corral`).toBe(false), { timeout: 10_000 });
    } finally {
      child.kill('SIGKILL');
      await child;
      // The killed run's worktree.
      await execa('node', [path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'clean'], { cwd: repo, reject: false });
    }
  });
});

describe('without a child subreaper (no perl, no python3 on PATH)', () => {
  it('the run says so in a warning and in the trace, and still runs', async () => {
    // Everything on the usual paths but perl and python.
    const bin = tempDir('corral-no-interpreters-');
    for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue;
      }
      for (const name of names) {
        if (/^(perl|python)/.test(name) || existsSync(path.join(bin, name))) continue;
        symlinkSync(path.join(dir, name), path.join(bin, name));
      }
    }
    const repo = repoWithFiles({ 'ticket.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nsandbox: none\nmodel: replay:replay.yaml\n', 'replay.yaml': 'turns:\n  - text: Done.\n' }, 'corral-survivors-');
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { PATH: bin } });
    const report = runReport(run.stdout);
    expect(run.exitCode, `${run.stderr}\n${report.reason}`).toBe(0);
    const warning = report.warnings.find((w: string) => w.startsWith('processes:'));
    expect(warning).toBe('processes: no child subreaper works here, so a process a command detaches with setsid can outlive it (no perl on PATH; no python3 on PATH)');
    expect(run.stderr).toContain(warning);
    const events = readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events.find((event) => event.type === 'sandbox')).toMatchObject({ kind: 'none', reaper: 'none', warning });
  });
});
