import path from 'node:path';
import { EXIT, formatProblem, UsageError } from '../../errors.js';
import { decisionLine, describeSandbox } from '../../guard/describe-verdict.js';
import { dryRunGuard } from '../../run/dry-run.js';
import type { Guard } from '../../guard/guard.js';
import { expectationFor, loadPolicyCases, meetsExpectation } from '../../run/policy-test.js';
import type { CliIo } from '../io.js';
import { judgeCall } from '../../run/call-pipeline.js';

export const DEFAULT_POLICY_TEST_FILE = 'policy_tests.yaml';

/** `corral policy test [file]`: every case through the real guard as a dry run; exit 1 on any mismatch. */
export async function policyTestCommand(file: string | undefined, io: CliIo, sandboxOverride?: 'bwrap' | 'none'): Promise<number> {
  const shown = file ?? DEFAULT_POLICY_TEST_FILE;
  const absolute = path.resolve(shown);
  const { cases, problems, sandbox } = await loadPolicyCases(absolute);
  if (problems.length > 0) {
    io.stderr.write(`${shown}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    for (const problem of problems) io.stderr.write(`  ${formatProblem({ ...problem, file: shown })}\n`);
    return EXIT.usage;
  }
  const guards = new Map<string, Guard>();
  const guardFor = async (ticketFile: string | undefined): Promise<Guard> => {
    const key = ticketFile ?? '';
    let guard = guards.get(key);
    if (guard === undefined) {
      guard = await dryRunGuard(ticketFile, path.dirname(absolute), io.env, sandboxOverride ?? sandbox);
      guards.set(key, guard);
    }
    return guard;
  };
  let passed = 0;
  let failed = 0;
  let judgedFor: string | undefined;
  for (const item of cases) {
    let guard: Guard;
    try {
      guard = await guardFor(item.ticketFile);
    } catch (error) {
      if (error instanceof UsageError) throw new UsageError(`${shown}:${item.line}: case ${item.id}: ${error.message}`, error.problems);
      throw error;
    }
    if (judgedFor === undefined) io.stdout.write(`sandbox: ${(judgedFor = describeSandbox(guard.sandbox))}\n`);
    const { verdict } = await judgeCall(guard, item.tool, item.args, item.cwd);
    const expectation = expectationFor(item, guard.sandbox);
    const expected = item.rule ? `${expectation} by ${item.rule}` : expectation;
    if (meetsExpectation(verdict, expectation, expectation === item.expect ? item.rule : undefined)) {
      passed += 1;
      io.stdout.write(`ok    ${item.id}  ${decisionLine(verdict)}\n`);
    } else {
      failed += 1;
      io.stdout.write(`FAIL  ${item.id}  (${shown}:${item.line})  got ${decisionLine(verdict)}, expected ${expected}\n      reason: ${verdict.decision.reason}\n`);
    }
  }
  io.stdout.write(`${passed} passed, ${failed} failed\n`);
  return failed > 0 ? EXIT.failed : EXIT.passed;
}
