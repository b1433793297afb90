import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, type CliRun, jsonLines } from '../support/cli.js';
import { extraWorktrees, gitIn, makeDemoRepo, tempDir } from '../support/repo.js';

interface Report {
  ticket: { id: string };
  status: string;
  steps: number;
  exitCode: number;
  checks: { passed: boolean }[];
  checkRoundsUsed: number;
  denied: { rule: string; call: string }[];
  asked: { rule: string; call: string }[];
  followUps: string[];
  changes: { change: { kind: string; path: string }; allowed: boolean }[];
  patch: string;
  trace: string;
  branch?: string;
  baseCommit: string;
}

function traceEvents(file: string): { type: string; [k: string]: unknown }[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
}

describe('the demo: corral run tickets/ on a real repository', () => {
  let repo: string;
  let run: CliRun;
  let reports: Report[];

  beforeAll(async () => {
    repo = makeDemoRepo();
    run = await runCli(['run', 'tickets/', '--json'], { cwd: repo });
    reports = jsonLines(run.stdout).tickets as Report[];
  });

  it('passes every example ticket and exits 0', () => {
    expect(run.stderr).not.toContain('internal error');
    // Lines come in the order the tickets finished; they run in parallel.
    expect(reports.map((r) => [r.ticket.id, r.status]).sort()).toEqual([
      ['cap-fine', 'passed'],
      ['fix-days-overdue', 'passed'],
      ['slugify-punctuation', 'passed'],
    ]);
    expect(run.exitCode).toBe(0);
  });

  it('prints only JSON on stdout with --json, progress on stderr', () => {
    // One line per ticket, then the totals.
    expect(run.stdout.trim().split('\n')).toHaveLength(4);
    expect(jsonLines(run.stdout).totals).toMatchObject({ tickets: 3, byStatus: { passed: 3 }, exitCode: 0 });
    expect(run.stderr).toContain('[fix-days-overdue] step 1');
  });

  it('shows a refused call the agent recovers from', () => {
    const report = reports.find((r) => r.ticket.id === 'fix-days-overdue')!;
    expect(report.denied).toHaveLength(0);
    expect(report.asked).toHaveLength(1);
    expect(report.asked[0]!.call).toBe('Read(../NOTES.md)');
    expect(report.followUps).toEqual(['fine() accepts a negative day count and returns a negative fine.']);
    const results = traceEvents(report.trace).filter((e) => e.type === 'tool_result');
    expect(results[0]).toMatchObject({ tool: 'Read', isError: true });
  });

  it('shows a failing check that goes back to the agent and is then fixed (Markdown ticket)', () => {
    const report = reports.find((r) => r.ticket.id === 'slugify-punctuation')!;
    expect(report.checkRoundsUsed).toBe(2);
    const checks = traceEvents(report.trace).filter((e) => e.type === 'check');
    expect(checks.map((c) => c.passed)).toEqual([false, true]);
    expect(String(checks[0]!.output)).toContain('dune-messiah-');
  });

  it('commits each passed run to corral/<ticket-id> on top of the base', () => {
    for (const report of reports) {
      const parent = gitIn(repo, ['rev-parse', `corral/${report.ticket.id}^`]).trim();
      expect(parent).toBe(report.baseCommit);
      const files = gitIn(repo, ['diff', '--name-only', report.baseCommit, `corral/${report.ticket.id}`]).trim().split('\n');
      expect(files.sort()).toEqual(report.changes.map((c) => c.change.path).sort());
    }
  });

  it('writes a patch that applies to the base and reproduces the branch', () => {
    for (const report of reports) {
      const check = tempDir('corral-apply-');
      gitIn(repo, ['worktree', 'add', '--detach', '-q', check, report.baseCommit]);
      try {
        execFileSync('git', ['apply', '--index', report.patch], { cwd: check });
        const diff = gitIn(check, ['diff', '--cached', '--stat', `corral/${report.ticket.id}`]).trim();
        expect(diff).toBe('');
      } finally {
        gitIn(repo, ['worktree', 'remove', '--force', check]);
      }
    }
  });

  it('removes every worktree and leaves the host checkout untouched', () => {
    expect(extraWorktrees(repo)).toEqual([]);
    expect(gitIn(repo, ['status', '--porcelain']).trim()).toBe('');
    for (const report of reports) expect(existsSync(path.dirname(report.trace))).toBe(true);
    expect(readdirSync(path.join(repo, '.corral', 'runs'))).toHaveLength(3);
  });

  it('writes a JSONL trace that starts with run_start and ends with end', () => {
    const events = traceEvents(reports[0]!.trace);
    expect(events[0]!.type).toBe('run_start');
    expect(events.at(-1)).toMatchObject({ type: 'end', status: 'passed', exitCode: 0 });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
  });

  it('gives every trace line the documented common fields, a step that never goes back, and a versioned run_start', () => {
    const events = traceEvents(reports[0]!.trace) as Record<string, unknown>[];
    for (const event of events) expect(Object.keys(event).slice(0, 7)).toEqual(['v', 'seq', 'time', 'run', 'ticket', 'step', 'type']);
    const steps = events.map((e) => e.step as number);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(steps.at(-1)).toBe(reports[0]!.steps);
    expect(events[0]).toMatchObject({ v: 1, step: 0, corral: expect.stringMatching(/^\d+\.\d+\.\d+/), configDigest: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });
});

describe('the terminal summary', () => {
  it('names status, changes, checks, calls, follow-ups, patch, branch and trace', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['run', 'tickets/fix-days-overdue.yaml'], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(run.exitCode).toBe(0);
    const summary = run.stdout;
    expect(summary).toMatch(/✔ PASSED {2}fix-days-overdue/);
    expect(summary).toMatch(/M {2}fixtures\/example-project\/src\/fees\.js +allowed/);
    expect(summary).toMatch(/A {2}fixtures\/example-project\/test\/days-overdue\.test\.js +allowed/);
    expect(summary).toContain('✔ cd fixtures/example-project && node --test');
    expect(summary).toContain('6 tool calls · 0 denied · 1 asked');
    expect(summary).toContain('Read(../NOTES.md)');
    expect(summary).toContain('• fine() accepts a negative day count');
    expect(summary).toMatch(/patch +\.corral\/runs\/fix-days-overdue-[\w-]+\/patch\.diff/);
    expect(summary).toContain('branch   corral/fix-days-overdue');
    expect(summary).not.toMatch(/\u001b\[/);
  });
});
