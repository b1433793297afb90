import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as junit2json, type TestCase, type TestSuite, type TestSuites } from 'junit2json';
import { mergeToString } from 'junit-report-merger';
import { beforeAll, describe, expect, it } from 'vitest';
import parseWithXunitViewer from 'xunit-viewer/src/cli/parse.js';
import { validateXML } from 'xmllint-wasm';
import { z } from 'zod';
import { jsonLines, PROJECT_ROOT, runCli } from '../support/cli.js';
import { repoWithFiles } from '../support/repo.js';

// A real batch (passed, failed, skipped) read by what reads corral's reports in CI: the
// published JSON Schema for every `--json` line, and for the JUnit file both schemas and
// three JUnit consumers from npm (junit2json, junit-report-merger, xunit-viewer's parser).

/** Ticket `id` in `folder` writes out/<id>.txt and runs `check`. */
function ticket(folder: string, id: string, check: string, extra = ''): Record<string, string> {
  return {
    [`replay/${id}.yaml`]: `turns:\n  - tools:\n      - Write: {file_path: out/${id}.txt, content: "${id}\\n"}\n  - text: done\n`,
    [`${folder}/${id}.yaml`]: [`id: ${id}`, `task: write out/${id}.txt`, `allow: ["out/${id}.txt"]`, 'sandbox: none', `model: replay:../replay/${id}.yaml`, `checks: [${JSON.stringify(check)}]`, extra].join('\n'),
  };
}

const FAILING_CHECK = 'echo "expected 3 <got> 4"; false';

describe('the reports of a batch with a passed, a failed and a skipped ticket', () => {
  let repo: string;
  let stdout: string;
  let exitCode: number;
  let xml: string;
  let moreXml: string;

  beforeAll(async () => {
    repo = repoWithFiles(
      {
        'README.md': 'reports fixture\n',
        ...ticket('tickets', 'a-passes', 'test -f out/a-passes.txt', 'title: Make it pass'),
        ...ticket('tickets', 'b-fails', FAILING_CHECK),
        ...ticket('tickets', 'c-later', 'true'),
        ...ticket('more', 'd-more', 'test -f out/d-more.txt'),
      },
      'corral-reports-',
    );
    // One at a time and --bail: a-passes passes, b-fails fails, c-later is never started.
    const run = await runCli(['run', 'tickets', '--jobs', '1', '--bail', '--json', '--junit', 'junit.xml'], { cwd: repo, env: { NO_COLOR: '1', CI: 'true' }, timeoutMs: 240_000 });
    ({ stdout, exitCode } = run);
    expect(exitCode, run.stderr).toBe(1);
    xml = readFileSync(path.join(repo, 'junit.xml'), 'utf8');
    const more = await runCli(['run', 'more', '--junit', 'more.xml'], { cwd: repo, env: { NO_COLOR: '1', CI: 'true' } });
    expect(more.exitCode, more.stderr).toBe(0);
    moreXml = readFileSync(path.join(repo, 'more.xml'), 'utf8');
  }, 300_000);

  it('writes --json lines that each validate against schema/report.schema.json, every field present', () => {
    const schema = z.fromJSONSchema(JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'schema/report.schema.json'), 'utf8')));
    const lines = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => line['type'])).toEqual(['run', 'run', 'skipped', 'totals']);
    for (const line of lines) expect(schema.safeParse(line).error, JSON.stringify(line)).toBeUndefined();
    const { tickets } = jsonLines(stdout);
    const passed = tickets.find((t) => t.ticket.id === 'a-passes');
    expect(passed).toMatchObject({ ticket: { title: 'Make it pass' }, hostChanges: [], approvalsNeeded: null, branch: 'corral/a-passes', budgetExhausted: null, worktree: null });
    expect(tickets.find((t) => t.ticket.id === 'b-fails')).toMatchObject({ ticket: { title: null }, branch: null, status: 'failed' });
  });

  it('writes a JUnit file valid against schema/junit.xsd and Jenkins junit-10', async () => {
    for (const file of ['schema/junit.xsd', 'fixtures/junit/junit-10.xsd']) {
      const schema = { fileName: path.basename(file), contents: readFileSync(path.join(PROJECT_ROOT, file), 'utf8') };
      for (const report of [xml, moreXml]) {
        const result = await validateXML({ xml: [{ fileName: 'junit.xml', contents: report }], schema: [schema] });
        expect(result.errors.map((error) => `${file}: ${error.rawMessage}`)).toEqual([]);
      }
    }
  });

  it('junit2json reads each ticket as a testcase named by its id, with its file, the failure and its message', async () => {
    const parsed = (await junit2json(xml)) as TestSuites;
    expect(parsed).toMatchObject({ name: 'corral', tests: 3, failures: 1, errors: 0 });
    const cases = (parsed.testsuite ?? []).flatMap((suite) => suite.testcase ?? []) as (TestCase & { file?: string })[];
    expect(cases.map((c) => [c.name, c.file])).toEqual([
      ['a-passes', 'tickets/a-passes.yaml'],
      ['b-fails', 'tickets/b-fails.yaml'],
      ['c-later', 'tickets/c-later.yaml'],
    ]);
    const [passed, failed, later] = cases;
    expect(passed!.failure).toBeUndefined();
    expect(failed!.failure).toHaveLength(1);
    expect(failed!.failure![0]!.type).toBe('failed');
    expect(failed!.failure![0]!.message).toMatch(/^checks still failing.* · checks: echo "expected 3 <got> 4"; false failed \(exit 1\)$/);
    expect(failed!.failure![0]!.inner).toContain('expected 3 <got> 4');
    expect(failed!.failure![0]!.inner).toContain('✘ FAILED  b-fails');
    expect(later!.skipped?.[0]?.message).toContain('b-fails did not pass');
    const suite = (parsed.testsuite ?? []).find((s) => s.name === 'b-fails') as TestSuite;
    expect(suite.properties).toContainEqual({ name: 'corral.status', value: 'failed' });
  });

  it("junit-report-merger joins two batches' files, keeping every ticket, file and failure", async () => {
    const merged = await mergeToString([xml, moreXml]);
    const parsed = (await junit2json(merged)) as TestSuites;
    expect(parsed).toMatchObject({ tests: 4, failures: 1 });
    const cases = (parsed.testsuite ?? []).flatMap((suite) => suite.testcase ?? []) as (TestCase & { file?: string })[];
    expect(cases.map((c) => `${c.name} ${c.file}`).sort()).toEqual(['a-passes tickets/a-passes.yaml', 'b-fails tickets/b-fails.yaml', 'c-later tickets/c-later.yaml', 'd-more more/d-more.yaml']);
    const failed = cases.find((c) => c.name === 'b-fails')!;
    expect(failed.failure?.[0]?.message).toContain('checks: ');
    expect(failed.failure?.[0]?.inner).toContain('expected 3 <got> 4');
  });

  it("xunit-viewer's parser shows each ticket's status, and the failure's message and text", async () => {
    const { suites } = await parseWithXunitViewer(xml);
    const tests = Object.values(suites).flatMap((suite) => Object.values(suite.tests));
    expect(Object.fromEntries(tests.map((t) => [t.name, t.status]))).toEqual({ 'a-passes': 'passed', 'b-fails': 'failure', 'c-later': 'skipped' });
    const failed = tests.find((t) => t.name === 'b-fails')!;
    expect(failed.messages?.some((m) => m.includes('checks: '))).toBe(true);
    expect(failed.messages?.some((m) => m.includes('expected 3 <got> 4'))).toBe(true);
    expect(failed.properties?.['file']).toEqual(['tickets/b-fails.yaml']);
  });
});
