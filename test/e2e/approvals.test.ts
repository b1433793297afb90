import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { NO_USER_CONFIG, PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { answerPrompts, runInPty } from '../support/pty.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

const BIN = path.join(PROJECT_ROOT, 'bin', 'corral.cjs');

/** A repository with a script the guard cannot vouch for (`node scripts/gen.js` asks), a ticket and its replay. */
function askingRepo(turns: string, config = ''): string {
  return repoWithFiles({
    'src/app.js': 'export const app = 1;\n',
    'scripts/gen.js': "require('fs').appendFileSync('src/gen.txt', process.argv.slice(2).join(' ') + '\\n');\n",
    't.yaml': 'task: Change the app\nallow: ["src/**"]\nchecks: ["test -f src/app.js"]\nmodel: replay:replay.yaml\n# the strict guard, with no sandbox to contain the script: it is asked\nsandbox: none\n',
    'replay.yaml': `turns:\n${turns}`,
    ...(config ? { 'corral.yaml': config } : {}),
  }, 'corral-approvals-');
}

const FINISH = '  - tools:\n      - Write: {file_path: src/app.js, content: "export const app = 2;\\n"}\n  - text: Done.\n';

/** The report line in a terminal's mixed output (stdout and stderr together). */
function jsonReport(output: string): Record<string, any> {
  const line = output.split('\n').find((l) => l.startsWith('{"corral"'));
  if (!line) throw new Error(`no JSON report in:\n${output}`);
  return JSON.parse(line);
}

function ptyEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LANG: process.env.LANG, XDG_CONFIG_HOME: NO_USER_CONFIG, NO_COLOR: '1', TERM: 'dumb', ...extra };
}

describe('asks at a terminal', () => {
  it('prompts with the call made visible; y/a/N answers approve once, for the run, or refuse', async () => {
    const repo = askingRepo(
      [
        // The ESC must show up as text in the prompt, not act on the terminal.
        '  - tools:\n      - Bash: {command: "node scripts/gen.js \'\\e[31mred\'"}\n',
        '  - tools:\n      - Bash: {command: "node scripts/gen.js again"}\n',
        '  - tools:\n      - Bash: {command: "npm install left-pad"}\n',
        FINISH,
      ].join(''),
    );
    const run = await runInPty(['node', BIN, 'run', 't.yaml', '--json'], {
      cwd: repo,
      env: ptyEnv(),
      respond: answerPrompts('Allow?', ['a\r', '\r']),
      timeoutMs: 60_000,
    });
    expect(run.exitCode).toBe(0);
    // Two prompts: the second gen.js call was covered by "always for this run".
    expect(run.output.split('Allow?').length - 1).toBe(2);
    expect(run.output).toContain('command: node scripts/gen.js \'\\x1b[31mred\'');
    expect(run.output).not.toContain('\x1b[31m');
    expect(run.output).toContain('rule: default (default)');
    const report = jsonReport(run.output);
    expect(report.status).toBe('passed');
    expect(report.asked.map((r: { call: string; answer: string }) => [r.call, r.answer])).toEqual([
      [expect.stringContaining('node scripts/gen.js'), 'always'],
      ['Bash(node scripts/gen.js again)', 'remembered'],
      ['Bash(npm install left-pad)', 'no'],
    ]);
    // Approved calls ran; the refused one left no approvals file (a person answered it).
    const patch = readFileSync(report.patch, 'utf8');
    expect(patch).toContain('+again');
    expect(report.approvalsNeeded).toBeNull();
    const trace = readFileSync(report.trace, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(trace.filter((e) => e.type === 'approval').map((e) => [e.approved, e.by])).toEqual([
      [true, 'person'],
      [true, 'remembered'],
      [false, 'person'],
    ]);
  });

  it('answers y once: the next call with the same prefix is asked again', async () => {
    const repo = askingRepo(['  - tools:\n      - Bash: {command: node scripts/gen.js one}\n', '  - tools:\n      - Bash: {command: node scripts/gen.js two}\n', FINISH].join(''));
    const run = await runInPty(['node', BIN, 'run', 't.yaml', '--json'], { cwd: repo, env: ptyEnv(), respond: answerPrompts('Allow?', ['y\r', 'yes\r']) });
    expect(run.exitCode).toBe(0);
    expect(jsonReport(run.output).asked.map((r: { answer: string }) => r.answer)).toEqual(['yes', 'yes']);
  });

  it('Ctrl-C at the prompt interrupts the run (exit 130), keeping the patch and leaving no worktree', async () => {
    const repo = askingRepo(['  - tools:\n      - Write: {file_path: src/app.js, content: "export const app = 3;\\n"}\n      - Bash: {command: node scripts/gen.js one}\n', FINISH].join(''));
    const run = await runInPty(['node', BIN, 'run', 't.yaml', '--json'], { cwd: repo, env: ptyEnv(), respond: answerPrompts('Allow?', ['\x03']) });
    expect(run.exitCode).toBe(130);
    const report = jsonReport(run.output);
    expect(report.status).toBe('interrupted');
    expect(readFileSync(report.patch, 'utf8')).toContain('+export const app = 3;');
    expect(gitIn(repo, ['worktree', 'list', '--porcelain']).match(/^worktree /gm)).toHaveLength(1);
  });

  it('never prompts under CI=true, even at a terminal', async () => {
    const repo = askingRepo(['  - tools:\n      - Bash: {command: node scripts/gen.js one}\n', FINISH].join(''));
    const run = await runInPty(['node', BIN, 'run', 't.yaml', '--json'], { cwd: repo, env: ptyEnv({ CI: 'true' }) });
    expect(run.output).not.toContain('Allow?');
    expect(jsonReport(run.output).asked.map((r: { answer: string }) => r.answer)).toEqual(['unattended']);
  });
});

describe('unattended runs', () => {
  it('refuse every ask, write it to approvals-needed.yaml as a paste-ready rule, and that rule then allows the call', async () => {
    const repo = askingRepo(['  - tools:\n      - Bash: {command: node scripts/gen.js from-ci}\n', FINISH].join(''));
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.asked).toEqual([expect.objectContaining({ rule: 'default', answer: 'unattended' })]);
    expect(readFileSync(report.patch, 'utf8')).not.toContain('from-ci');
    expect(report.approvalsNeeded).toBe(path.join(report.runDir, 'approvals-needed.yaml'));
    const text = readFileSync(report.approvalsNeeded, 'utf8');
    expect(text.startsWith('#')).toBe(true);
    const entries = parse(text) as { call: string; allow: string[]; reason: string; asked_by: string }[];
    expect(entries).toEqual([expect.objectContaining({ call: 'Bash(node scripts/gen.js from-ci)', allow: ['Bash(node scripts/gen.js from-ci)'], asked_by: 'default (default)' })]);
    expect(entries[0]!.reason).toContain('no rule allows it');

    // Paste the rule into the project config and run again: no ask, the call runs.
    writeFileSync(path.join(repo, 'corral.yaml'), `policy:\n  allow:\n${entries[0]!.allow.map((rule) => `    - ${JSON.stringify(rule)}\n`).join('')}`);
    const again = await runCli(['run', 't.yaml', '--json'], { cwd: repo });
    const second = runReport(again.stdout);
    expect(second.asked).toEqual([]);
    expect(second.approvalsNeeded).toBeNull();
    expect(readFileSync(second.patch, 'utf8')).toContain('+from-ci');
    // The summary a person reads counts asked, approved, refused and denied.
    const summary = await runCli(['run', 't.yaml'], { cwd: askingRepo(['  - tools:\n      - Bash: {command: node scripts/gen.js x}\n', FINISH].join('')), env: { NO_COLOR: '1' } });
    expect(summary.stdout).toContain('2 tool calls · 0 denied · 1 asked (0 approved, 1 refused)');
    expect(summary.stdout).toMatch(/approve +\.corral\/runs\/.*\/approvals-needed\.yaml/);
  });

  it('--unattended refuses at a terminal too', async () => {
    const repo = askingRepo(['  - tools:\n      - Bash: {command: node scripts/gen.js one}\n', FINISH].join(''));
    const run = await runInPty(['node', BIN, 'run', 't.yaml', '--json', '--unattended'], { cwd: repo, env: ptyEnv() });
    expect(run.output).not.toContain('Allow?');
    const report = jsonReport(run.output);
    expect(existsSync(report.approvalsNeeded)).toBe(true);
  });

  it('stop as blocked (exit 4) after the configured number of refused calls in a row', async () => {
    const repo = askingRepo(
      ['  - tools:\n      - Bash: {command: node scripts/gen.js 1}\n', '  - tools:\n      - Read: {file_path: /etc/shadow}\n', '  - tools:\n      - Bash: {command: node scripts/gen.js 3}\n', FINISH].join(''),
      'max_refusals_in_a_row: 2\n',
    );
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(4);
    const report = runReport(run.stdout);
    expect(report.status).toBe('blocked');
    expect(report.reason).toContain('2 calls in a row were denied or refused (limit 2)');
    expect(report.steps).toBe(2);
    expect(readdirSync(path.join(repo, '.corral', 'runs'))).toHaveLength(1);
  });
});
