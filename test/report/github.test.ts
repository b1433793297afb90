import { describe, expect, it } from 'vitest';
import type { JsonSkippedReport } from '../../src/report/batch-report.js';
import { sampleBatch, sampleCheck, sampleRun, sampleSkipped } from '../support/batch-reports.js';
import { escapeCell, escapeData, escapeProperty, GITHUB_ERROR_LIMIT, githubAnnotations, githubStepSummary, REASON_LIMIT } from '../../src/report/github.js';

const CWD = '/home/runner/work/app/app/sub';
const run = (overrides: Parameters<typeof sampleRun>[0]) => sampleRun(overrides, CWD);
const skipped = (id: string, cause: JsonSkippedReport['cause'], reason: string) => sampleSkipped(id, cause, reason, CWD);


const SAMPLE = sampleBatch([
  run({ ticket: { id: 'ok', file: `${CWD}/tickets/ok.md`, title: 'Add a flag' } }),
  run({
    ticket: { id: 'broken', file: 'tickets/a:b,c.md' },
    status: 'failed',
    exitCode: 1,
    reason: 'coverage fell to 50%\nsee the log',
    costUsd: null,
    checks: [sampleCheck({ name: 'lint' }), sampleCheck({ name: 'test', passed: false, exitCode: 1 }), sampleCheck({ name: 'types', passed: false, exitCode: 2 })],
  }),
  run({ ticket: { id: 'stopped', file: `${CWD}/tickets/stopped.md` }, status: 'interrupted', exitCode: 130, reason: 'interrupted by Ctrl-C', checks: [] }),
  skipped('after-bail', 'bail', 'skipped: broken failed and --bail is set'),
  skipped('after-stop', 'interrupted', 'skipped: the batch was interrupted'),
  skipped('too-dear', 'max_usd', 'skipped: the batch spent $5.01 of its $5 budget'),
]);

describe('escapeData and escapeProperty', () => {
  it('escape what GitHub unescapes in workflow command data', () => {
    expect(escapeData('50% done\r\nnext: a,b')).toBe('50%25 done%0D%0Anext: a,b');
  });

  it('also escape the property separators in property values', () => {
    expect(escapeProperty('50% done\r\nnext: a,b')).toBe('50%25 done%0D%0Anext%3A a%2Cb');
  });

  it('escape % first, so an existing escape is not taken for one', () => {
    expect(escapeData('%0A')).toBe('%250A');
    expect(escapeProperty('%3A')).toBe('%253A');
  });
});

describe('githubAnnotations', () => {
  const lines = githubAnnotations(SAMPLE, { cwd: CWD });

  it('annotates tickets that did not pass, and batch-budget skips, but not bail or interruption skips', () => {
    expect(lines.map((line) => line.match(/title=corral%3A (\S+) /)?.[1])).toEqual(['broken', 'stopped', 'too-dear']);
  });

  it('escapes the file, title and message, and names the failing checks', () => {
    expect(lines[0]).toBe('::error file=tickets/a%3Ab%2Cc.md,title=corral%3A broken failed::coverage fell to 50%25%0Asee the log%0Afailing checks: test, types');
  });

  it('writes a one-line message when no check failed', () => {
    expect(lines[1]).toBe('::error file=tickets/stopped.md,title=corral%3A stopped interrupted::interrupted by Ctrl-C');
    expect(lines[2]).toBe('::error file=tickets/too-dear.md,title=corral%3A too-dear skipped::skipped: the batch spent $5.01 of its $5 budget');
  });

  it('makes paths relative to the workspace when given', () => {
    const [line] = githubAnnotations(sampleBatch([SAMPLE.tickets[1]!]), { cwd: CWD, workspace: '/home/runner/work/app/app' });
    expect(line).toMatch(/^::error file=sub\/tickets\/a%3Ab%2Cc\.md,/);
  });

  it('shows control characters instead of passing them to the log', () => {
    const [line] = githubAnnotations(sampleBatch([run({ ticket: { id: 't', file: 't.md' }, status: 'failed', exitCode: 1, reason: 'bad\x1b[2Jthing' })]), { cwd: CWD });
    expect(line).toBe('::error file=t.md,title=corral%3A t failed::bad\\x1b[2Jthing');
  });

  it('writes nothing for a batch that passed', () => {
    expect(githubAnnotations(sampleBatch([SAMPLE.tickets[0]!]), { cwd: CWD })).toEqual([]);
  });

  const failing = (count: number) => Array.from({ length: count }, (_, i) => run({ ticket: { id: `f${String(i + 1).padStart(2, '0')}`, file: `${CWD}/tickets/f${String(i + 1).padStart(2, '0')}.md` }, status: 'failed', exitCode: 1, reason: 'r' }));

  it('annotates each of exactly ten failing tickets: GitHub shows them all', () => {
    const out = githubAnnotations(sampleBatch(failing(GITHUB_ERROR_LIMIT)), { cwd: CWD });
    expect(out).toHaveLength(10);
    expect(out.every((line) => line.startsWith('::error file=tickets/f'))).toBe(true);
  });

  it('past ten, annotates the first nine and names the rest in a tenth, so none vanishes silently', () => {
    const out = githubAnnotations(sampleBatch(failing(12)), { cwd: CWD });
    expect(out).toHaveLength(GITHUB_ERROR_LIMIT);
    expect(out.slice(0, 9).map((line) => line.match(/title=corral%3A (\S+) /)?.[1])).toEqual(['f01', 'f02', 'f03', 'f04', 'f05', 'f06', 'f07', 'f08', 'f09']);
    expect(out[9]).toBe(
      '::error title=corral%3A 3 more tickets did not pass::GitHub shows 10 annotations a step; these are in the step summary and the JUnit report:%0Af10 failed (tickets/f10.md)%0Af11 failed (tickets/f11.md)%0Af12 failed (tickets/f12.md)',
    );
  });
});

describe('githubStepSummary', () => {
  const markdown = githubStepSummary(SAMPLE, { cwd: CWD });
  const lines = markdown.split('\n');

  it('has a heading, a totals line and a table header', () => {
    expect(lines.slice(0, 6)).toEqual([
      '### corral',
      '',
      '6 tickets: 1 interrupted, 1 failed, 3 skipped, 1 passed · 4,500 tokens · $0.0246 (+1 unknown) · 1m2s',
      '',
      '| Ticket | Status | Steps | Tokens | Cost | Time | Why |',
      '| --- | --- | ---: | ---: | ---: | ---: | --- |',
    ]);
    expect(markdown.endsWith('|\n')).toBe(true);
  });

  it('writes one row per ticket', () => {
    expect(lines.slice(6, -1)).toEqual([
      '| ok — Add a flag<br><sub>tickets/ok.md</sub> | ✅ passed | 4 | 1,500 | $0.0123 | 12.3s |  |',
      '| broken<br><sub>tickets/a:b,c.md</sub> | ❌ failed | 4 | 1,500 | unknown | 12.3s | coverage fell to 50%<br>see the log |',
      '| stopped<br><sub>tickets/stopped.md</sub> | ❌ interrupted | 4 | 1,500 | $0.0123 | 12.3s | interrupted by Ctrl-C |',
      '| after-bail<br><sub>tickets/after-bail.md</sub> | ⏭️ skipped | — | — | — | — | skipped: broken failed and --bail is set |',
      '| after-stop<br><sub>tickets/after-stop.md</sub> | ⏭️ skipped | — | — | — | — | skipped: the batch was interrupted |',
      '| too-dear<br><sub>tickets/too-dear.md</sub> | ⏭️ skipped | — | — | — | — | skipped: the batch spent $5.01 of its $5 budget |',
    ]);
    expect(lines.at(-1)).toBe('');
  });

  it('keeps a pipe, a line break or HTML in a cell from breaking the table', () => {
    const report = sampleBatch([run({ ticket: { id: 'a|b', file: 't.md', title: '<img src=x>' }, status: 'failed', exitCode: 1, reason: 'x | y\r\nz & w' })]);
    const row = githubStepSummary(report, { cwd: CWD }).split('\n')[6]!;
    expect(row).toBe('| a\\|b — &lt;img src=x><br><sub>t.md</sub> | ❌ failed | 4 | 1,500 | $0.0123 | 12.3s | x \\| y<br>z &amp; w |');
  });

  it('cuts a long reason', () => {
    const report = sampleBatch([run({ ticket: { id: 't', file: 't.md' }, status: 'failed', exitCode: 1, reason: 'why '.repeat(100) })]);
    const why = githubStepSummary(report, { cwd: CWD }).split('\n')[6]!.split(' | ').at(-1)!;
    expect(why).toBe(`${'why '.repeat(100).slice(0, REASON_LIMIT).trim()}… |`);
  });

  it('says when no cost is known', () => {
    const report = sampleBatch([run({ ticket: { id: 't', file: 't.md' }, costUsd: null, usage: { inputTokens: 1, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 } })]);
    expect(githubStepSummary(report, { cwd: CWD }).split('\n')[2]).toBe('1 ticket: 1 passed · 1 tokens · cost unknown · 1m2s');
  });
});

describe('escapeCell', () => {
  it('escapes a pipe after a backslash too', () => {
    // makeVisible doubles the backslash, so Markdown shows `\` and the pipe stays escaped.
    expect(escapeCell('a\\|b')).toBe('a\\\\\\|b');
  });
});
