import { execa, type ResultPromise } from 'execa';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { startMessagesServer } from '../support/messages-server.js';
import { extraWorktrees, gitIn, repoWithFiles, tempDir } from '../support/repo.js';

// The fault suite for what is not the model: hostile repositories, tools that misbehave,
// and signals at every phase. Each asserts the exit code, the status, that the agent's
// work is in the patch, and that no worktree and no process of the run is left.

const BIN = path.join(PROJECT_ROOT, 'bin', 'corral.cjs');
/** A sleep duration no other test uses, to find this file's processes by their command line. */
const SLEEP = `987.${process.pid}`;

interface Report {
  status: string;
  exitCode: number;
  reason: string;
  patch: string;
  trace: string;
  hostChanges?: string[];
  changes: { change: { path: string } }[];
}

function repo(files: Record<string, string>, replay: string, ticket = 'task: t\nallow: ["src/**"]\nsandbox: auto\n'): string {
  return repoWithFiles({ 'src/a.txt': 'a\n', ...files, 't.yaml': `${ticket}model: replay:replay.yaml\n`, 'replay.yaml': `turns:\n${replay}` }, 'corral-faults-');
}

const WRITE_FIRST = '  - tools:\n      - Write: {file_path: src/a.txt, content: "work before the fault\\n"}\n';

/** Live processes of this file's sleeps. */
function sleepers(): string[] {
  return execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' })
    .split('\n')
    .filter((args) => args.includes(`sleep ${SLEEP}`));
}

/** True once the command itself runs (not just bubblewrap, whose arguments name it too, still setting up). */
function sleeping(): boolean {
  return sleepers().some((args) => args.startsWith(`sleep ${SLEEP}`));
}

function traceOf(report: Report): { type: string; [key: string]: unknown }[] {
  return readFileSync(report.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
}

/** Starts the CLI in the background and resolves once its progress shows `marker` (wrapped: the child is a thenable). */
async function startRun(cwd: string, args: string[], marker: string): Promise<{ child: ResultPromise }> {
  const child = execa('node', [BIN, ...args], { cwd, reject: false, stdin: 'ignore', env: { NO_COLOR: '1', XDG_CONFIG_HOME: NO_USER_CONFIG } });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes(marker)) resolve();
    });
    child.once('exit', () => reject(new Error(`exited before "${marker}":\n${seen}`)));
  });
  return { child };
}

async function waitFor(test: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !test(); i += 1) await new Promise((r) => setTimeout(r, 20));
}

describe('a hostile repository', () => {
  it('ends as fence_violated (exit 2) when the run changes the host HEAD, refs, config, hooks or index, and says what changed', async () => {
    const dir = repo(
      {
        // A script the agent could have written; the check runs it in the worktree,
        // unsandboxed (the sandbox keeps the host's git metadata read-only: sandbox.test.ts).
        'src/check.sh': [
          'common="$(git rev-parse --git-common-dir)"',
          'git config --file "$common/config" core.fsmonitor "touch /tmp/never"',
          'printf "#!/bin/sh\\n" > "$common/hooks/pre-commit"',
          'git branch planted',
          'exit 0',
          '',
        ].join('\n'),
      },
      `${WRITE_FIRST}  - text: done\n`,
      'task: t\nallow: ["src/**"]\nchecks: ["bash src/check.sh"]\nsandbox: none\n',
    );
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: dir });
    expect(run.exitCode).toBe(2);
    const report = runReport(run.stdout) as Report;
    expect(report.status).toBe('fence_violated');
    expect(report.reason).toContain('the host repository changed during the run');
    expect(report.hostChanges, JSON.stringify(report.hostChanges)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ref new: refs\/heads\/planted [0-9a-f]{40}$/),
        'git config line new: fsmonitor = touch /tmp/never',
        expect.stringMatching(/^hook new: pre-commit /),
      ]),
    );
    expect(readFileSync(report.patch, 'utf8')).toContain('+work before the fault');
    expect(gitIn(dir, ['branch', '--list', 'corral/*']).trim()).toBe('');
    expect(extraWorktrees(dir)).toEqual([]);
    const plain = await runCli(['run', 't.yaml'], { cwd: repo({ 'src/check.sh': 'git branch planted\n' }, `${WRITE_FIRST}  - text: done\n`, 'task: t\nallow: ["src/**"]\nchecks: ["bash src/check.sh"]\nsandbox: none\n'), env: { NO_COLOR: '1' } });
    expect(plain.stdout).toContain('✘ the host repository changed during the run');
    expect(plain.stdout).toMatch(/ref new: refs\/heads\/planted/);
  });

  it('runs no code the host repository sets up: hooks, core.hooksPath, core.fsmonitor', async () => {
    const marker = path.join(tempDir('corral-marker-'), 'ran');
    const dir = repo({}, `${WRITE_FIRST}  - text: done\n`);
    const hooks = tempDir('corral-hooks-path-');
    for (const name of ['post-checkout', 'pre-commit', 'post-commit', 'reference-transaction', 'post-index-change']) {
      writeFileSync(path.join(hooks, name), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
      writeFileSync(path.join(dir, '.git', 'hooks', name), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    }
    gitIn(dir, ['config', 'core.hooksPath', hooks]);
    gitIn(dir, ['config', 'core.fsmonitor', `touch ${marker}`]);
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: dir });
    expect(runReport(run.stdout).status).toBe('passed');
    expect(existsSync(marker)).toBe(false);
  });
});

describe('tools that misbehave', () => {
  it('kills a command that outlives its timeout with its whole tree, a backgrounded grandchild included', async () => {
    const dir = repo({}, `${WRITE_FIRST}  - tools:\n      - Bash: {command: "sleep ${SLEEP} & sleep ${SLEEP}", timeout: 1000}\n  - text: done\n`);
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: dir });
    const report = runReport(run.stdout) as Report;
    expect(report.status).toBe('passed');
    const results = traceOf(report).filter((event) => event.type === 'tool_result');
    expect(results.map((event) => event.isError)).toEqual([false, true]);
    expect(sleepers()).toEqual([]);
  });

  it('cuts 2 GB of output without holding it: the run stays under 300 MB', async () => {
    const dir = repo({}, `${WRITE_FIRST}  - tools:\n      - Bash: {command: "yes | head -c 2G"}\n  - text: done\n`);
    const child = execa('node', [BIN, 'run', 't.yaml', '--json'], { cwd: dir, reject: false, stdin: 'ignore', env: { XDG_CONFIG_HOME: NO_USER_CONFIG } });
    let peakKb = 0;
    const sample = setInterval(() => {
      try {
        const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
        peakKb = Math.max(peakKb, Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0));
      } catch {
        // It has exited.
      }
    }, 25);
    const result = await child;
    clearInterval(sample);
    const report = runReport(String(result.stdout)) as Report;
    expect(report.status).toBe('passed');
    const bash = traceOf(report).find((event) => event.type === 'tool_result' && event.tool === 'Bash')!;
    expect(bash.bytes).toBeLessThan(40_000);
    expect(peakKb).toBeGreaterThan(0);
    expect(peakKb).toBeLessThan(300 * 1024);
  });

  it('gives a command that reads stdin EOF at once, and refuses binary and huge files to Read with a clear error', async () => {
    const dir = repo(
      { 'src/blob.bin': '\u0000\u0001\u0002binary\u0000' },
      [
        '  - tools:',
        '      - Bash: {command: "cat > src/stdin.txt; echo after-eof >> src/stdin.txt"}',
        '      - Bash: {command: "head -c 11000000 /dev/zero | tr \'\\\\0\' a > src/huge.txt"}',
        '      - Read: {file_path: src/blob.bin}',
        '      - Read: {file_path: src/huge.txt}',
        '  - text: done',
        '',
      ].join('\n'),
      'task: t\nallow: ["src/**"]\nallow_empty: true\nsandbox: auto\n',
    );
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: dir, timeoutMs: 60_000 });
    const report = runReport(run.stdout) as Report;
    expect(report.status).toBe('passed');
    expect(readFileSync(report.patch, 'utf8')).toMatch(/\+\+\+ b\/src\/stdin\.txt[\s\S]*\n\+after-eof\n/);
    expect(traceOf(report).filter((event) => event.type === 'tool_result').map((event) => [event.tool, event.isError])).toEqual([
      ['Bash', false],
      ['Bash', false],
      ['Read', true],
      ['Read', true],
    ]);
  });
});

describe('signals at every phase', () => {
  async function interrupted(child: ResultPromise, dir: string, signal: NodeJS.Signals = 'SIGINT'): Promise<Report> {
    child.kill(signal);
    const result = await child;
    expect(result.exitCode).toBe(130);
    const report = runReport(String(result.stdout)) as Report;
    expect(report.status).toBe('interrupted');
    expect(existsSync(report.trace)).toBe(true);
    expect(readFileSync(report.trace, 'utf8')).toContain('"type":"end"');
    expect(extraWorktrees(dir)).toEqual([]);
    expect(sleepers()).toEqual([]);
    return report;
  }

  it('during setup', async () => {
    const dir = repo({}, `${WRITE_FIRST}  - text: done\n`, `task: t\nallow: ["src/**"]\nsetup: ["sleep ${SLEEP}"]\nsandbox: auto\n`);
    const { child } = await startRun(dir, ['run', 't.yaml', '--json'], 'worktree at');
    await waitFor(sleeping);
    await interrupted(child, dir, 'SIGTERM');
  });

  it('during a model call', async () => {
    const server = await startMessagesServer([
      { content: [{ type: 'tool_use', name: 'Write', input: { file_path: 'src/a.txt', content: 'work before the fault\n' } }] },
      { content: [{ type: 'text', text: 'never sent' }], delayMs: 30_000 },
    ]);
    try {
      const dir = repoWithFiles({ 'src/a.txt': 'a\n', 't.yaml': 'task: t\nallow: ["src/**"]\nmodel: claude-sonnet-4-6\nsandbox: auto\n' }, 'corral-faults-');
      const child = execa('node', [BIN, 'run', 't.yaml', '--json'], {
        cwd: dir,
        reject: false,
        stdin: 'ignore',
        env: { NO_COLOR: '1', XDG_CONFIG_HOME: NO_USER_CONFIG, ANTHROPIC_API_KEY: 'sk-ant-test-faults-0000000000', ANTHROPIC_BASE_URL: server.url },
      });
      await waitFor(() => server.requests.length >= 2);
      const report = await interrupted(child, dir, 'SIGTERM');
      expect(readFileSync(report.patch, 'utf8')).toContain('+work before the fault');
    } finally {
      await server.close();
    }
  });

  it('during a check, keeping the agent work', async () => {
    const dir = repo({}, `${WRITE_FIRST}  - text: done\n`, `task: t\nallow: ["src/**"]\nchecks: ["sleep ${SLEEP}"]\nsandbox: auto\n`);
    const { child } = await startRun(dir, ['run', 't.yaml', '--json'], 'end_turn');
    await waitFor(sleeping);
    const report = await interrupted(child, dir);
    expect(readFileSync(report.patch, 'utf8')).toContain('+work before the fault');
  });

  it('a second Ctrl-C exits at once and still leaves no registered worktree, temp dir or command behind', async () => {
    // Unsandboxed, so nothing but corral's own clean-up can stop the command.
    const dir = repo({}, `${WRITE_FIRST}  - tools:\n      - Bash: {command: "sleep ${SLEEP}"}\n`, 'task: t\nallow: ["src/**"]\nsandbox: none\n');
    const { child } = await startRun(dir, ['run', 't.yaml', '--json'], 'step 1');
    await waitFor(sleeping);
    const worktree = extraWorktrees(dir)[0]!;
    child.kill('SIGINT');
    child.kill('SIGINT');
    const result = await child;
    expect(result.exitCode).toBe(130);
    expect(extraWorktrees(dir)).toEqual([]);
    expect(existsSync(worktree)).toBe(false);
    expect(sleepers()).toEqual([]);
  });

  it('a killed run leaves its worktree locked to a dead process: corral clean and the next run remove it, and its temp dir', async () => {
    const dir = repo({}, `${WRITE_FIRST}  - tools:\n      - Bash: {command: "sleep ${SLEEP}"}\n`);
    const killOne = async (): Promise<string> => {
      // The workspace is made while the model answers: killed once it is whole (the policy
      // line comes after the worktree and the run's temp dir).
      const { child } = await startRun(dir, ['run', 't.yaml', '--json'], 'policy:');
      child.kill('SIGKILL');
      await child;
      return extraWorktrees(dir)[0]!;
    };
    const first = await killOne();
    expect(first).toBeDefined();
    expect(existsSync(`${first}.tmp`)).toBe(true);
    expect(gitIn(dir, ['worktree', 'list', '--porcelain'])).toMatch(/locked corral pid=\d+/);
    const clean = await runCli(['clean'], { cwd: dir });
    expect(clean.stdout).toContain(`removed ${first}`);
    expect(clean.stdout).toContain('1 stale worktree removed; 0 of live runs left alone');
    expect(extraWorktrees(dir)).toEqual([]);
    expect(existsSync(first)).toBe(false);
    expect(existsSync(`${first}.tmp`)).toBe(false);

    // The next run in the same repository prunes a killed run's worktree before making its own.
    const second = await killOne();
    writeFileSync(path.join(dir, 'quick.yaml'), `turns:\n${WRITE_FIRST}  - text: done\n`);
    const pruned = await runCli(['run', 't.yaml', '--json', '--model', 'replay:quick.yaml'], { cwd: dir });
    expect(pruned.exitCode).toBe(0);
    expect(existsSync(second)).toBe(false);
    expect(existsSync(`${second}.tmp`)).toBe(false);
    expect(extraWorktrees(dir)).toEqual([]);
    // A SIGKILLed run cannot kill its commands; this test does.
    await execa('pkill', ['-f', `sleep ${SLEEP}`], { reject: false });
  });
});
