import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { REPORTER_NAMES } from '../../src/report/reporter.js';
import { chooseReporterNames, createReporters, parseReporterNames, type ReporterSituation } from '../../src/report/reporters/registry.js';
import { sampleBatch, sampleResult, sampleRun, sampleSkipped } from '../support/batch-reports.js';
import { tempDir } from '../support/repo.js';

const CWD = '/repo';

/** A stream that keeps what is written; `isTTY` as a terminal would say. */
function stream(isTTY = false) {
  let written = '';
  return { isTTY, columns: 80, write: (text: string) => ((written += text), true), text: () => written } as unknown as NodeJS.WriteStream & { text(): string };
}

function usageErrorOf(act: () => unknown): UsageError {
  try {
    act();
  } catch (error) {
    if (error instanceof UsageError) return error;
    throw error;
  }
  throw new Error('expected a UsageError');
}

const AT_A_TERMINAL: ReporterSituation = { runs: 3, ci: false, stderrIsTTY: true, githubActions: false };
const NOTHING_ASKED = { json: false, junit: false };

describe('parseReporterNames', () => {
  it('knows the five reporters and keeps each once, in calling order', () => {
    expect(REPORTER_NAMES).toEqual(['terminal', 'live', 'json', 'junit', 'github']);
    expect(parseReporterNames(['github', 'json', 'junit', 'json'], { junit: true })).toEqual(['json', 'junit', 'github']);
  });

  it('refuses an unknown name with exit 64, naming the one probably meant', () => {
    const error = usageErrorOf(() => parseReporterNames(['jsno'], { junit: false }));
    expect(error.exitCode).toBe(64);
    expect(error.message).toBe('--reporter "jsno": no such reporter; did you mean json? (reporters: terminal, live, json, junit, github)');
    expect(usageErrorOf(() => parseReporterNames(['terminal', 'Githb'], { junit: false })).message).toContain('did you mean github?');
  });

  it('lists the names when none is close', () => {
    const error = usageErrorOf(() => parseReporterNames(['verbose'], { junit: false }));
    expect(error.message).toBe('--reporter "verbose": no such reporter (reporters: terminal, live, json, junit, github)');
  });

  it('refuses junit with no --junit file to write, and terminal with live', () => {
    expect(usageErrorOf(() => parseReporterNames(['junit'], { junit: false })).message).toContain('--junit <file>');
    expect(usageErrorOf(() => parseReporterNames(['live', 'terminal'], { junit: false })).message).toContain('pick one');
  });
});

describe('chooseReporterNames', () => {
  it('by default draws the live view only for a batch at a terminal, outside CI', () => {
    expect(chooseReporterNames(NOTHING_ASKED, AT_A_TERMINAL)).toEqual(['live']);
    expect(chooseReporterNames(NOTHING_ASKED, { ...AT_A_TERMINAL, runs: 1 })).toEqual(['terminal']);
    expect(chooseReporterNames(NOTHING_ASKED, { ...AT_A_TERMINAL, ci: true })).toEqual(['terminal']);
    expect(chooseReporterNames(NOTHING_ASKED, { ...AT_A_TERMINAL, stderrIsTTY: false })).toEqual(['terminal']);
    // report merge runs nothing, so there is nothing to watch.
    expect(chooseReporterNames(NOTHING_ASKED, { ...AT_A_TERMINAL, runs: 0 })).toEqual(['terminal']);
  });

  it('adds json for --json, junit for --junit and github under GitHub Actions', () => {
    expect(chooseReporterNames({ json: true, junit: true }, { ...AT_A_TERMINAL, ci: true, githubActions: true })).toEqual(['terminal', 'json', 'junit', 'github']);
    expect(chooseReporterNames({ json: true, junit: false }, AT_A_TERMINAL)).toEqual(['live', 'json']);
  });

  it('gives exactly the named reporters instead of the defaults, plus what --json and --junit ask for', () => {
    const ci = { ...AT_A_TERMINAL, ci: true, githubActions: true };
    expect(chooseReporterNames({ named: ['json'], json: false, junit: false }, ci)).toEqual(['json']);
    expect(chooseReporterNames({ named: ['github', 'terminal'], json: false, junit: true }, ci)).toEqual(['terminal', 'junit', 'github']);
    expect(chooseReporterNames({ named: ['live'], json: true, junit: false }, { ...AT_A_TERMINAL, runs: 1 })).toEqual(['live', 'json']);
  });
});

describe('createReporters', () => {
  const passed = sampleRun({ ticket: { id: 'ok', file: `${CWD}/tickets/ok.md` } });
  const failed = sampleRun({ ticket: { id: 'broken', file: `${CWD}/tickets/broken.md` }, status: 'failed', exitCode: 1, reason: 'check test failed' });
  const skipped = sampleSkipped('late', 'bail', 'skipped: broken did not pass');
  const batch = sampleBatch([failed, passed, skipped]);

  function open(names: string[], options: { stderrIsTTY?: boolean; env?: NodeJS.ProcessEnv; junit?: string } = {}) {
    const stdout = stream();
    const stderr = stream(options.stderrIsTTY);
    const set = createReporters(names, { stdout, stderr, env: { NO_COLOR: '1', ...options.env }, cwd: CWD, redact: (text) => text.replaceAll('hunter2', '[REDACTED]'), junit: options.junit });
    return { set, stdout, stderr };
  }

  /** A batch of three as `corral run` reports it. */
  async function runBatch(set: ReturnType<typeof open>['set']) {
    set.onBatchStart({ tickets: 3, merged: false });
    set.onRunStart('ok');
    set.onEvent('ok', { type: 'worktree', dir: '/tmp/wt', baseCommit: '0123456789abcdef' });
    set.onEvent('ok', { type: 'decision', step: 1, id: 'c1', tool: 'Bash', effect: 'deny', rule: 'baseline', scope: 'call', reason: 'echo hunter2', commands: [], paths: [] });
    set.onRunEnd(sampleResult(passed), passed);
    set.onRunStart('broken');
    set.onRunEnd(sampleResult(failed), failed);
    set.onSkipped(skipped);
    set.close();
    await set.onBatchEnd(batch);
  }

  it('refuses a name it does not know, as --reporter does', () => {
    expect(usageErrorOf(() => open(['termnial'])).message).toContain('did you mean terminal?');
  });

  it('terminal: summaries, the skip and the table on stdout; plain progress lines, redacted, on stderr', async () => {
    const { set, stdout, stderr } = open(['terminal']);
    expect(set.names).toEqual(['terminal']);
    await runBatch(set);
    expect(stdout.text()).toMatch(/^✔ PASSED {2}ok/);
    expect(stdout.text()).toContain('✘ FAILED  broken');
    expect(stdout.text()).toContain('⊘ SKIPPED  late');
    expect(stdout.text()).toContain('corral: 3 tickets · 1 failed, 1 skipped, 1 passed');
    expect(stderr.text()).toContain('[ok] worktree at 0123456789ab\n');
    expect(stderr.text()).toContain('[ok] denied Bash baseline: echo [REDACTED]\n');
  });

  it('terminal prints no table for a batch of one ticket, and only the table for a merge', async () => {
    const one = open(['terminal']);
    one.set.onBatchStart({ tickets: 1, merged: false });
    one.set.onRunEnd(sampleResult(passed), passed);
    await one.set.onBatchEnd(sampleBatch([passed]));
    expect(one.stdout.text()).toContain('✔ PASSED');
    expect(one.stdout.text()).not.toContain('corral: 1 ticket');

    const merge = open(['terminal']);
    merge.set.onBatchStart({ tickets: 1, merged: true });
    await merge.set.onBatchEnd(sampleBatch([passed]));
    expect(merge.stdout.text()).toMatch(/^corral: 1 ticket · 1 passed/);
  });

  it('json: a line per ticket as it ends, then the totals, and stdout holds nothing else', async () => {
    const { set, stdout, stderr } = open(['terminal', 'json']);
    await runBatch(set);
    const lines = stdout.text().trim().split('\n').map((line) => JSON.parse(line));
    expect(lines.map((line) => line.type)).toEqual(['run', 'run', 'skipped', 'totals']);
    expect(lines.map((line) => line.ticket?.id)).toEqual(['ok', 'broken', 'late', undefined]);
    // terminal gives stdout up to json and keeps its progress lines.
    expect(stderr.text()).toContain('[ok] worktree at');
  });

  it('json prints a merged batch whole at its end', async () => {
    const { set, stdout } = open(['json']);
    set.onBatchStart({ tickets: 3, merged: true });
    await set.onBatchEnd(batch);
    expect(stdout.text().trim().split('\n').map((line) => JSON.parse(line).type)).toEqual(['run', 'run', 'skipped', 'totals']);
  });

  it('junit writes the --junit file at the end; github annotates and appends the step summary', async () => {
    const dir = tempDir('corral-reporters-');
    const junit = path.join(dir, 'report.xml');
    const summary = path.join(dir, 'summary.md');
    writeFileSync(summary, '# before\n');
    const { set, stdout, stderr } = open(['json', 'junit', 'github'], { junit, env: { GITHUB_STEP_SUMMARY: summary } });
    await runBatch(set);
    expect(readFileSync(junit, 'utf8')).toMatch(/<testsuites name="corral" tests="3" failures="1"/);
    expect(readFileSync(summary, 'utf8')).toMatch(/^# before\n### corral\n/);
    // With stdout taken by JSON lines, the annotations go to stderr, which the runner reads too.
    expect(stderr.text()).toBe('::error file=tickets/broken.md,title=corral%3A broken failed::check test failed\n');
    expect(stdout.text()).not.toContain('::error');
  });

  it('live: draws the running tickets on stderr, prints notices above them, and is gone before the table', async () => {
    const { set, stdout, stderr } = open(['live'], { stderrIsTTY: true });
    set.onBatchStart({ tickets: 3, merged: false });
    set.onRunStart('ok');
    expect(stderr.text()).toMatch(/▸ ok {2}step 0/);
    set.notice('corral: SIGINT, stopping');
    expect(stderr.text()).toContain('\x1b[1F\x1b[Jcorral: SIGINT, stopping\n▸ ok');
    let during = '';
    await set.prompting(async () => {
      during = stderr.text();
    });
    expect(during.endsWith('\x1b[J')).toBe(true);
    set.onRunEnd(sampleResult(passed), passed);
    set.close();
    await set.onBatchEnd(sampleBatch([passed]));
    expect(stdout.text()).toContain('✔ PASSED  ok');
    expect(stdout.text()).toContain('corral: 1 ticket · 1 passed');
  });

  it('a notice with no live view is a line on stderr, whatever the reporters', () => {
    const { set, stderr } = open(['json']);
    set.notice('corral: SIGTERM, stopping');
    expect(stderr.text()).toBe('corral: SIGTERM, stopping\n');
  });
});
