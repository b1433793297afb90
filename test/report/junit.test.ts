import { readFile } from 'node:fs/promises';
import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import type { JsonRunReport } from '../../src/report/json.js';
import { sampleBatch, sampleCheck, sampleRun, sampleSkipped } from '../support/batch-reports.js';
import { CHECK_OUTPUT_LIMIT, failureDetails, formatJunit, xmlSafe } from '../../src/report/junit.js';
import { formatSummary } from '../../src/report/summary.js';

const CWD = '/repo';
const SCHEMA = readFile(new URL('../../schema/junit.xsd', import.meta.url), 'utf8');
// The Jenkins xUnit plugin's schema, vendored: the one CI servers that validate JUnit files use.
const JENKINS_SCHEMA = readFile(new URL('../../fixtures/junit/junit-10.xsd', import.meta.url), 'utf8');


const NASTY_OUTPUT = 'FAIL src/a.test.ts\n\x1b[31mexpected 1 < 2 && "x" to be \'y\'\x1b[39m\nbyte: \x00 end\n';

const SAMPLE = sampleBatch([
  sampleRun({ ticket: { id: 'add-flag', file: '/repo/tickets/add-flag.md', title: 'Add a --dry-run flag' }, branch: 'corral/add-flag' }),
  sampleRun({
    ticket: { id: 'fix-parser', file: 'tickets/fix-parser.md' },
    status: 'failed',
    exitCode: 1,
    reason: 'check test still fails after 2 rounds',
    costUsd: null,
    checks: [sampleCheck({ name: 'lint' }), sampleCheck({ name: 'test', passed: false, exitCode: 1, output: NASTY_OUTPUT }), sampleCheck({ name: 'e2e', passed: false, exitCode: null, timedOut: true, output: 'hung' })],
    checkRoundsUsed: 2,
    denied: [{ step: 3, tool: 'Bash', effect: 'deny', rule: 'baseline.network', reason: 'no network', call: 'Bash curl https://example.com' }],
  }),
  sampleRun({
    ticket: { id: 'touch-env', file: '/repo/tickets/touch-env.md' },
    status: 'fence_violated',
    exitCode: 2,
    reason: 'changed a path outside the fence: .env',
    changes: [
      { change: { kind: 'modified', path: 'src/a.ts' }, allowed: true },
      { change: { kind: 'added', path: '.env' }, allowed: false, reason: 'matches forbid .env*' },
    ],
    hostChanges: ['HEAD moved from abc123 to def456'],
  }),
  sampleRun({
    ticket: { id: 'overloaded', file: '/repo/tickets/overloaded.md' },
    status: 'model_error',
    exitCode: 6,
    reason: 'the model API answered 529 overloaded',
    checks: [],
    patch: null,
  }),
  sampleSkipped('later', 'bail', 'skipped: fix-parser failed and --bail is set'),
]);

async function schemaErrors(xml: string, schema: Promise<string> = SCHEMA): Promise<string[]> {
  const result = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [await schema] });
  return result.valid ? [] : result.errors.map((error) => error.message);
}

/** Errors against the repository's schema and against Jenkins junit-10, each named. */
async function bothSchemaErrors(xml: string): Promise<string[]> {
  return [...(await schemaErrors(xml)).map((e) => `junit.xsd: ${e}`), ...(await schemaErrors(xml, JENKINS_SCHEMA)).map((e) => `junit-10.xsd: ${e}`)];
}

/** The text of the first `<tag ...>` start tag whose attributes include `marker`. */
function startTag(xml: string, tag: string, marker = ''): string {
  const found = xml.match(new RegExp(`<${tag}\\b[^>]*${marker}[^>]*>`));
  if (!found) throw new Error(`no <${tag}> with ${marker}`);
  return found[0];
}

/** What a parser reads from element text written by formatJunit. */
function unescapeText(text: string): string {
  const named: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
  return text.replace(/&(#\d+|\w+);/g, (_, ref: string) => (ref.startsWith('#') ? String.fromCodePoint(Number(ref.slice(1))) : named[ref]!));
}

/** The text of each `<tag>…</tag>` in order. */
function elementTexts(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}\\b[^>]*>([^<]*)</${tag}>`, 'g'))].map((found) => unescapeText(found[1]!));
}

/** The lines of one ticket's testsuite (its properties and testcase), found by the ticket id. */
function testcase(xml: string, name: string): string {
  const start = xml.indexOf(`<testsuite name="${name}"`);
  expect(start).toBeGreaterThanOrEqual(0);
  return xml.slice(start, xml.indexOf('</testsuite>', start));
}

describe('formatJunit', () => {
  const xml = formatJunit(SAMPLE, { cwd: CWD });

  it('writes a document both the repository schema and Jenkins junit-10 accept', async () => {
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(await bothSchemaErrors(xml)).toEqual([]);
  });

  it('counts failures and errors on the suites, and each ticket on its own suite', () => {
    // junit-10 has no skipped count on <testsuites>.
    expect(startTag(xml, 'testsuites')).toBe('<testsuites name="corral" tests="5" failures="2" errors="1" time="61.500">');
    expect(startTag(xml, 'testsuite', 'name="fix-parser"')).toBe('<testsuite name="fix-parser" tests="1" failures="1" errors="0" skipped="0" time="12.345" file="tickets/fix-parser.md">');
    expect(startTag(xml, 'testsuite', 'name="overloaded"')).toContain('tests="1" failures="0" errors="1" skipped="0"');
    expect(startTag(xml, 'testsuite', 'name="later"')).toContain('tests="1" failures="0" errors="0" skipped="1"');
  });

  it('shows a ticket skipped because the batch ran out of money as a failure, not a skip', async () => {
    const out = formatJunit(sampleBatch([sampleSkipped('dear', 'max_usd', '--max-usd $1.00: $0.20 left'), sampleSkipped('later', 'bail', 'a failed')]), { cwd: CWD });
    expect(startTag(out, 'testsuites')).toContain('tests="2" failures="1" errors="0"');
    expect(testcase(out, 'dear')).toContain('<failure type="skipped_max_usd" message="--max-usd $1.00: $0.20 left">--max-usd $1.00: $0.20 left\n</failure>');
    expect(testcase(out, 'later')).toContain('<skipped message="a failed"/>');
    expect(await bothSchemaErrors(out)).toEqual([]);
  });

  it('adds the timestamp only when given, and both schemas accept it', async () => {
    expect(xml).not.toContain('timestamp=');
    const stamped = formatJunit(SAMPLE, { cwd: CWD, timestamp: '2025-01-02T03:04:05.678Z' });
    expect(startTag(stamped, 'testsuite')).toContain('timestamp="2025-01-02T03:04:05.678Z"');
    expect(await bothSchemaErrors(stamped)).toEqual([]);
  });

  it('is deterministic', () => {
    expect(formatJunit(SAMPLE, { cwd: CWD })).toBe(xml);
  });

  it('names each testcase by the ticket id, with the ticket file relative to cwd as file and classname', () => {
    expect(startTag(xml, 'testcase', 'add-flag')).toBe('<testcase name="add-flag" classname="tickets/add-flag.md" file="tickets/add-flag.md" time="12.345">');
    expect(startTag(xml, 'testcase', 'fix-parser')).toContain('file="tickets/fix-parser.md"');
    expect(startTag(xml, 'testcase', 'later')).toBe('<testcase name="later" classname="tickets/later.md" file="tickets/later.md" time="0.000">');
    expect(testcase(xml, 'add-flag')).toContain('<property name="corral.title" value="Add a --dry-run flag"/>');
  });

  it('gives a passed ticket no failure, and properties for its checks and spending', () => {
    const passed = testcase(xml, 'add-flag');
    expect(passed).not.toMatch(/<failure|<error|<skipped/);
    for (const property of [
      '<property name="check:test" value="passed"/>',
      '<property name="corral.status" value="passed"/>',
      '<property name="corral.exit_code" value="0"/>',
      '<property name="corral.steps" value="4"/>',
      '<property name="corral.tokens" value="1500"/>',
      '<property name="corral.cost_usd" value="0.0123"/>',
      '<property name="corral.patch" value=".corral/runs/run-add-flag/changes.patch"/>',
      '<property name="corral.branch" value="corral/add-flag"/>',
      '<property name="corral.trace" value=".corral/runs/run-add-flag/trace.jsonl"/>',
    ]) {
      expect(passed).toContain(property);
    }
    expect(passed).toContain('<system-out>✔ PASSED  add-flag — Add a --dry-run flag  (exit 0)\n');
  });

  it('writes a failed ticket as a failure listing each failing check with its output, escaped', () => {
    const failed = testcase(xml, 'fix-parser');
    expect(failed).toContain('<property name="check:lint" value="passed"/>');
    expect(failed).toContain('<property name="check:test" value="failed (exit 1)"/>');
    expect(failed).toContain('<property name="check:e2e" value="timed out"/>');
    expect(failed).not.toContain('corral.cost_usd');
    expect(failed).toContain('<failure type="failed" message="check test still fails after 2 rounds · checks: lint passed, test failed (exit 1), e2e timed out">check test still fails after 2 rounds\n');
    expect(failed).toContain('check test: exit 1\n    FAIL src/a.test.ts\n    expected 1 &lt; 2 &amp;&amp; &quot;x&quot; to be &apos;y&apos;\n    byte: \\x00 end\n');
    expect(failed).toContain('check e2e: timed out\n    hung\n');
    expect(failed).toContain('denied: Bash curl https://example.com (by baseline.network: no network)');
    expect(failed).not.toContain('check lint:');
  });

  it('writes a breached fence as a failure naming the paths and host changes', () => {
    const fence = testcase(xml, 'touch-env');
    expect(fence).toContain('<failure type="fence_violated" message="changed a path outside the fence: .env · checks: test passed">');
    expect(fence).toContain('fence: .env (added) matches forbid .env*\n');
    expect(fence).toContain('host: HEAD moved from abc123 to def456\n');
    expect(fence).not.toContain('fence: src/a.ts');
  });

  it('writes a model error as an error, and a skipped ticket as skipped', () => {
    const modelError = testcase(xml, 'overloaded');
    expect(modelError).toContain('<error type="model_error" message="the model API answered 529 overloaded">');
    expect(modelError).not.toContain('corral.patch');
    const skip = testcase(xml, 'later');
    expect(skip).toContain('<skipped message="skipped: fix-parser failed and --bail is set"/>');
    expect(skip).toContain('<property name="corral.status" value="skipped"/>');
    expect(skip).toContain('<property name="corral.skip_cause" value="bail"/>');
    expect(skip).not.toContain('<system-out>');
  });

  it('puts the summary, with every check, in the failure text too, for consumers that drop properties and system-out', () => {
    const failed = testcase(xml, 'fix-parser');
    const failure = unescapeText(failed.slice(failed.indexOf('<failure'), failed.indexOf('</failure>')));
    expect(failure).toContain('✘ FAILED  fix-parser');
    expect(failure).toMatch(/✔ lint /);
    expect(failure).toMatch(/✘ test exit 1 /);
    expect(failure).toContain('spent');
  });

  it('never writes a character XML 1.0 cannot hold', async () => {
    const hostile = '\x00\x01\x08\x0b\x0c\x1b[2J\x7f\ufffe\uffff\ud800 lone \udfff tail 😀';
    const report = sampleBatch([
      sampleRun({
        ticket: { id: `id${hostile}`, file: '/repo/tickets/x.md', title: hostile },
        status: 'failed',
        exitCode: 1,
        reason: `reason\r\n${hostile}`,
        checks: [sampleCheck({ name: `name${hostile}`, passed: false, exitCode: 1, output: hostile })],
        warnings: [hostile],
        branch: hostile,
      }),
    ]);
    const out = formatJunit(report, { cwd: CWD });
    expect(out).not.toMatch(/[^\t\n\r\u{20}-\u{d7ff}\u{e000}-\u{fffd}\u{10000}-\u{10ffff}]/u);
    expect(out).toContain('😀');
    expect(out).toContain('message="reason\\r\\n');
    expect(await bothSchemaErrors(out)).toEqual([]);
  });

  it('carries the summary and the failure details as written, not reindented', () => {
    const runs = SAMPLE.tickets.filter((ticket): ticket is JsonRunReport => ticket.type === 'run');
    const summary = (run: JsonRunReport) => formatSummary(run, new Chalk({ level: 0 }), CWD);
    expect(elementTexts(xml, 'system-out')).toEqual(runs.map((run) => xmlSafe(summary(run))));
    const failing = runs.filter((run) => run.status === 'failed' || run.status === 'fence_violated');
    expect(elementTexts(xml, 'failure')).toEqual(failing.map((run) => xmlSafe(`${failureDetails(run, CWD)}\n${summary(run)}`)));
  });

  it('keeps line breaks in attribute values as references', () => {
    const out = formatJunit(sampleBatch([sampleRun({ ticket: { id: 't', file: 't.md' }, checks: [sampleCheck({ name: 'a\tb\nc' })] })]), { cwd: CWD });
    expect(out).toContain('<property name="check:a&#9;b&#10;c" value="passed"/>');
  });

  it('shows only the end of a long check output', () => {
    const output = `${'early line\n'.repeat(1000)}the last line`;
    const out = formatJunit(sampleBatch([sampleRun({ ticket: { id: 't', file: 't.md' }, status: 'failed', exitCode: 1, reason: 'r', checks: [sampleCheck({ name: 'test', passed: false, exitCode: 1, output })] })]), { cwd: CWD });
    const failure = out.slice(out.indexOf('<failure'), out.indexOf('</failure>'));
    expect(failure).toContain('earlier characters cut)');
    expect(failure).toContain('the last line');
    expect(failure.length).toBeLessThan(CHECK_OUTPUT_LIMIT * 1.6);
  });

  it('writes an empty batch the schema accepts', async () => {
    const out = formatJunit(sampleBatch([]), { cwd: CWD });
    expect(startTag(out, 'testsuites')).toContain('tests="0" failures="0" errors="0"');
    expect(await bothSchemaErrors(out)).toEqual([]);
  });
});

describe('xmlSafe', () => {
  it('writes out what XML cannot hold and leaves the rest', () => {
    expect(xmlSafe('a\x00b\x1bc\ufffed\ud800e\tf\ng\rh 😀')).toBe('a\\x00b\\x1bc\\u{fffe}d\\u{d800}e\tf\ng\rh 😀');
  });
});

describe('schema/junit.xsd', () => {
  const xml = formatJunit(SAMPLE, { cwd: CWD });

  it('rejects a testcase without a name', async () => {
    const errors = await schemaErrors(xml.replace('<testcase name="add-flag" ', '<testcase '));
    expect(errors.join('\n')).toMatch(/attribute 'name' is required/);
  });

  it('rejects an element it does not describe', async () => {
    const errors = await schemaErrors(xml.replace('<system-out>', '<flaky/><system-out>'));
    expect(errors.join('\n')).toMatch(/flaky/);
  });

  it('rejects what junit-10 rejects: properties on a testcase, a skipped count on the suites', async () => {
    const onCase = xml.replace('<system-out>', '<properties/><system-out>');
    expect((await schemaErrors(onCase, JENKINS_SCHEMA)).join('\n')).toMatch(/properties/);
    expect((await schemaErrors(onCase)).join('\n')).toMatch(/properties/);
    const skippedOnSuites = xml.replace('<testsuites name="corral"', '<testsuites name="corral" skipped="1"');
    expect((await schemaErrors(skippedOnSuites, JENKINS_SCHEMA)).join('\n')).toMatch(/skipped/);
    expect((await schemaErrors(skippedOnSuites)).join('\n')).toMatch(/skipped/);
  });

  it('rejects a testcase without its file', async () => {
    const errors = await schemaErrors(xml.replace(' file="tickets/add-flag.md" time', ' time'));
    expect(errors.join('\n')).toMatch(/attribute 'file' is required/);
  });

  it('rejects a negative count and an attribute it does not describe', async () => {
    expect((await schemaErrors(xml.replace('failures="2"', 'failures="-2"'))).join('\n')).toMatch(/attribute 'failures'.*'-2'/);
    expect((await schemaErrors(xml.replace('<testcase name="later"', '<testcase flaky="true" name="later"'))).join('\n')).toMatch(/attribute 'flaky' is not allowed/);
  });

  it('rejects a failure without its type', async () => {
    expect((await schemaErrors(xml.replace('<failure type="failed" ', '<failure '))).join('\n')).toMatch(/attribute 'type' is required/);
  });
});
