import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { outputTail } from '../../src/report/output-tail.js';
import { formatSummary } from '../../src/report/summary.js';
import { createRedactor } from '../../src/text/redact.js';
import { sampleCheck, sampleRun } from '../support/batch-reports.js';

const plain = new Chalk({ level: 0 });

describe('outputTail', () => {
  it('keeps the last lines, says how many went before, and cuts each to the width', () => {
    const output = `${Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n')}\n${'x'.repeat(500)}\n\n`;
    const tail = outputTail(output, { lines: 5, width: 40 });
    expect(tail).toEqual(['… 26 earlier lines', 'line 27', 'line 28', 'line 29', 'line 30', `${'x'.repeat(39)}…`]);
  });

  it('shows what a progress bar drew last, drops colours, and shows other escapes instead of acting on them', () => {
    expect(outputTail('10%\r50%\r100%\n\x1b[31mred\x1b[0m\n\x1b]0;title\x07x\u202ey\n', { width: 80 })).toEqual(['100%', 'red', 'x\\u{202e}y']);
  });

  it('is empty for no output', () => {
    expect(outputTail('', { width: 80 })).toEqual([]);
    expect(outputTail('\n\n', { width: 80 })).toEqual([]);
  });
});

describe('the summary of a failed check', () => {
  const secret = 'a-host-secret-value-1234567890';
  const run = sampleRun({
    ticket: { id: 'a', file: 'tickets/a.md' },
    status: 'failed',
    exitCode: 1,
    checks: [sampleCheck({ name: 'test', passed: false, exitCode: 2, output: `ok 1\nnot ok 2 - ${'y'.repeat(60)}${secret}\n` }), sampleCheck({ name: 'lint', output: 'all fine\n' })],
  });

  it('shows the failing check output, redacted before it is cut to the width', () => {
    const text = formatSummary(run, plain, '/repo', { width: 60, redact: createRedactor([{ name: 'DEPLOY_TOKEN', value: secret }]) });
    expect(text).toMatch(/✘ test exit 2 .*\n {6}│ ok 1\n {6}│ not ok 2 - y+…\n/);
    // Not a prefix of the secret either: redacted whole, before the line was cut.
    expect(text).not.toContain(secret.slice(0, 8));
    for (const line of text.split('\n').filter((l) => l.includes('│'))) expect(Array.from(line).length).toBeLessThanOrEqual(60);
    // A passing check shows no output.
    expect(text).not.toContain('all fine');
  });

  it('shows a failed setup with the end of its output', () => {
    const failedSetup = sampleRun({ ticket: { id: 'a', file: 'tickets/a.md' }, status: 'failed', exitCode: 1, checks: [], setup: [{ name: 'npm ci', exitCode: 1, timedOut: false, durationMs: 900, output: "npm ERR! code EROFS\nnpm ERR! read-only file system, open '/home/u/.npm/_cacache'\n" }] });
    expect(formatSummary(failedSetup, plain, '/repo')).toMatch(/setup {4}✘ npm ci exit 1 .*\n {6}│ npm ERR! code EROFS\n {6}│ npm ERR! read-only file system/);
  });
});
