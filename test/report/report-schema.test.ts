import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { completeRunLine, toJsonReport } from '../../src/report/json.js';
import { REPORT_SCHEMA_ID, reportJsonSchema, runLineSchema, skippedLineSchema, totalsLineSchema } from '../../src/report/report-schema.js';
import { internalErrorResult } from '../../src/trace/result.js';
import { sampleBatch, sampleCheck, sampleResult, sampleRun, sampleSkipped } from '../support/batch-reports.js';

// The published schema is generated from the zod schema. Regenerate it with
//   UPDATE_SCHEMA=1 npx vitest run test/report/report-schema.test.ts
const schemaFile = fileURLToPath(new URL('../../schema/report.schema.json', import.meta.url));
const readme = fs.readFileSync(fileURLToPath(new URL('../../README.md', import.meta.url)), 'utf8');

/** The committed file, as a validator: what a consumer of the published schema checks. */
function publishedValidator(): z.ZodType {
  return z.fromJSONSchema(JSON.parse(fs.readFileSync(schemaFile, 'utf8')) as Parameters<typeof z.fromJSONSchema>[0]);
}

describe('schema/report.schema.json', () => {
  it('is the JSON Schema generated from the report line schema', () => {
    const generated = reportJsonSchema();
    if (process.env['UPDATE_SCHEMA'] === '1') fs.writeFileSync(schemaFile, `${JSON.stringify(generated, null, 2)}\n`);
    expect(JSON.parse(fs.readFileSync(schemaFile, 'utf8'))).toEqual(generated);
    expect(generated['$id']).toBe(REPORT_SCHEMA_ID);
  });

  it('accepts the lines the writers make, with every empty fact written as null or []', () => {
    const validate = publishedValidator();
    const bare = toJsonReport(internalErrorResult({ id: 'x', file: 'tickets/x.md' }, 'replay:x', new Error('boom'), 5));
    expect(bare).toMatchObject({ ticket: { title: null }, budgetExhausted: null, baseCommit: null, hostChanges: [], approvalsNeeded: null, patch: null, branch: null, sandbox: null, worktree: null });
    const run = sampleRun({ ticket: { id: 'a', file: 'tickets/a.md', title: 'A' }, status: 'failed', exitCode: 1, checks: [sampleCheck({ name: 'test', passed: false, exitCode: 1 })] });
    const batch = sampleBatch([run, bare, sampleSkipped('late', 'bail', 'a failed'), sampleSkipped('dear', 'max_usd', 'no money')]);
    for (const line of [...batch.tickets, batch.totals]) expect(validate.safeParse(JSON.parse(JSON.stringify(line))).error).toBeUndefined();
  });

  it('round-trips a RunResult through its report line', () => {
    const run = sampleRun({ ticket: { id: 'a', file: 'tickets/a.md' }, branch: 'corral/a', hostChanges: ['HEAD moved'] });
    expect(toJsonReport(sampleResult(run))).toEqual(run);
  });

  it('rejects a line missing a documented field, and a field it does not document', () => {
    const validate = publishedValidator();
    const { branch: _branch, ...withoutBranch } = sampleRun({ ticket: { id: 'a', file: 'tickets/a.md' } });
    expect(validate.safeParse(withoutBranch).success).toBe(false);
    expect(validate.safeParse({ ...sampleRun({ ticket: { id: 'a', file: 'tickets/a.md' } }), extra: 1 }).success).toBe(false);
  });

  it('completes a read-back line that left its empty facts out', () => {
    const { budgetExhausted: _b, baseCommit: _c, hostChanges: _h, approvalsNeeded: _a, patch: _p, branch: _r, sandbox: _s, worktree: _w, ...old } = sampleRun({ ticket: { id: 'a', file: 'tickets/a.md' } });
    const completed = completeRunLine({ ...old, ticket: { id: 'a', file: 'tickets/a.md' } });
    expect(publishedValidator().safeParse(completed).error).toBeUndefined();
    expect(completed).toMatchObject({ hostChanges: [], branch: null, ticket: { title: null } });
  });
});

describe("the README's table of report fields", () => {
  // The table under "Report lines": one row per field, `name` in the first cell.
  const section = readme.slice(readme.indexOf('Fields of a report line'));
  const documented = new Set([...section.slice(0, section.indexOf('\n\n', section.indexOf('| ---'))).matchAll(/^\| `([A-Za-z.]+)`/gm)].map((m) => m[1]!));

  it.each([
    ['run', runLineSchema],
    ['skipped', skippedLineSchema],
    ['totals', totalsLineSchema],
  ] as const)('documents every field of a %s line', (_type, schema) => {
    const fields = Object.keys(schema.shape);
    expect(fields.filter((field) => !documented.has(field))).toEqual([]);
  });

  it('documents no field a line does not have', () => {
    const fields = new Set([runLineSchema, skippedLineSchema, totalsLineSchema].flatMap((schema) => Object.keys(schema.shape)));
    expect([...documented].filter((field) => !fields.has(field))).toEqual([]);
  });
});
