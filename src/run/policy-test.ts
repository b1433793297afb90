import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { Problem } from '../errors.js';
import { describeIssues } from '../ticket/describe-issues.js';
import { parseTicketText } from '../ticket/parse-text.js';
import type { Effect } from '../trace/records.js';
import type { GuardSandbox } from '../guard/facts.js';
import type { Verdict } from '../guard/guard.js';

export type Expectation = Effect | 'not-allow';

const caseSchema = z.strictObject({
  id: z.string().min(1).meta({ description: 'Names the case in the output.' }),
  tool: z.string().min(1).meta({ description: 'The tool called: Bash, Read, Write, Edit, Glob, Grep (any other name is denied).' }),
  args: z.record(z.string(), z.unknown()).meta({ description: 'The tool input, exactly as the model would send it, e.g. `{command: "git push"}`.' }),
  cwd: z.string().min(1).optional().meta({ description: 'Where the call starts, relative to the repository root (default: the root).' }),
  ticket: z.string().min(1).optional().meta({ description: "A ticket file (relative to this file) whose fence, checks and rules apply." }),
  expect: z.enum(['allow', 'ask', 'deny', 'not-allow']).meta({ description: 'The decision the case expects; `not-allow` accepts ask or deny.' }),
  sandboxed: z
    .enum(['allow', 'ask', 'deny', 'not-allow'])
    .optional()
    .meta({ description: 'The decision expected instead when commands run in bubblewrap without network (it contains what the guard cannot see); default: `expect`.' }),
  rule: z.string().min(1).optional().meta({ description: 'The rule id that must decide, e.g. `baseline.secrets` or `Bash(git push:*)`.' }),
  note: z.string().optional().meta({ description: 'Free text for people.' }),
});

const fileSchema = z.union([
  z.strictObject({
    ticket: z.string().min(1).optional().meta({ description: 'The ticket every case uses unless it names its own.' }),
    sandbox: z
      .enum(['bwrap', 'none'])
      .optional()
      .meta({ description: 'Judge as if commands ran in this sandbox (default: what a run gets on this machine; `--sandbox` overrides).' }),
    cases: z.array(caseSchema),
  }),
  z.array(caseSchema),
]);

export const POLICY_TESTS_SCHEMA_ID = 'https://corral.dev/schema/policy-tests.schema.json';

/** The published JSON Schema of policy test files, for editors. */
export function policyTestsJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(fileSchema, { target: 'draft-2020-12', io: 'input' });
  return { $schema, $id: POLICY_TESTS_SCHEMA_ID, title: 'corral policy tests', description: 'Cases for `corral policy test`: tool calls and the decisions the guard must make.', ...rest };
}

const FIELDS: Record<string, string[]> = { top: ['ticket', 'sandbox', 'cases'], case: Object.keys(caseSchema.shape) };

/** One case of a policy test file, with the line it starts on. */
export interface PolicyCase extends z.output<typeof caseSchema> {
  line: number;
  /** Absolute path of the ticket whose fence, checks and rules apply, if any. */
  ticketFile?: string;
}

/** Reads a policy test file; every problem names file, line and field. */
export async function loadPolicyCases(file: string): Promise<{ cases: PolicyCase[]; sandbox?: 'bwrap' | 'none'; problems: Problem[] }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    return { cases: [], problems: [{ file, line: 1, column: 1, field: '', message: `cannot read the policy test file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, hint: 'write cases as `cases: [{id, tool, args, expect}]`, see docs/guard.md' }] };
  }
  const parsed = parseTicketText(text, 'yaml');
  if ('problems' in parsed) return { cases: [], problems: parsed.problems.map((p) => ({ file, field: '', ...p })) };
  const result = fileSchema.safeParse(parsed.data);
  if (!result.success) {
    const names = (at: readonly PropertyKey[]): string[] => (at.length === 0 ? FIELDS.top! : FIELDS.case!);
    const problems = describeIssues(result.error.issues, parsed.data, names).map((p) => ({
      file,
      ...parsed.locator.locate(p.path, p.target),
      field: p.path.map(String).join('.'),
      message: p.message,
      hint: p.hint,
    }));
    return { cases: [], problems };
  }
  const data = result.data;
  const list = Array.isArray(data) ? data : data.cases;
  const defaultTicket = Array.isArray(data) ? undefined : data.ticket;
  const prefix = Array.isArray(data) ? [] : ['cases'];
  const dir = path.dirname(path.resolve(file));
  const seen = new Map<string, number>();
  const problems: Problem[] = [];
  const cases = list.map((item, index): PolicyCase => {
    const { line } = parsed.locator.locate([...prefix, index], 'value');
    const ticket = item.ticket ?? defaultTicket;
    const earlier = seen.get(item.id);
    if (earlier !== undefined) problems.push({ file, line, column: 1, field: [...prefix, index, 'id'].join('.'), message: `duplicate case id \`${item.id}\` (first on line ${earlier})` });
    seen.set(item.id, line);
    return { ...item, line, ...(ticket ? { ticketFile: path.resolve(dir, ticket) } : {}) };
  });
  return { cases, problems, ...(!Array.isArray(data) && data.sandbox ? { sandbox: data.sandbox } : {}) };
}

/** What a case expects under this guard's sandbox. */
export function expectationFor(item: Pick<PolicyCase, 'expect' | 'sandboxed'>, sandbox: GuardSandbox): Expectation {
  return item.sandboxed !== undefined && sandbox.kind === 'bwrap' && !sandbox.network ? item.sandboxed : item.expect;
}

/** Whether a decision meets what the case expects. */
export function meetsExpectation(verdict: Verdict, expectation: Expectation, rule?: string): boolean {
  const effect = verdict.decision.effect;
  const effectOk = expectation === 'not-allow' ? effect !== 'allow' : effect === expectation;
  return effectOk && (rule === undefined || verdict.decision.rule === rule);
}
