import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError, formatProblem, type Problem } from '../../src/errors.js';
import { checkTicketFile, loadTicket } from '../../src/ticket/load.js';
import { makeRepo, makeTempDir, writeFiles } from './temp-repo.js';

/** Writes `content` as `name` in a fresh repository and returns the problems found. */
async function problemsOf(name: string, content: string, repo = makeRepo()): Promise<Problem[]> {
  writeFiles(repo, { [name]: content });
  const result = await checkTicketFile(path.join(repo, name));
  expect(result.ticket).toBeUndefined();
  return result.problems;
}

/** line:column field — the part of a problem the tests pin down exactly. */
function where(problems: Problem[]): string[] {
  return problems.map((p) => `${p.line}:${p.column} ${p.field}`);
}

describe('checkTicketFile problems', () => {
  it('reports every problem of a file at once, at the right line, column and field', async () => {
    const problems = await problemsOf(
      't.yaml',
      [
        'id: "bad id"', // 1
        'alow: ["src/**"]', // 2
        'budget:', // 3
        '  steps: 0', // 4
        '  stpes: 3', // 5
        'checks:', // 6
        '  - npm test', // 7
        '  - run: 5', // 8
        '    nmae: x', // 9
        '  - 12', // 10
        'sandbox: docker', // 11
        'network: "yes"', // 12
        'env: [PATH, 1BAD]', // 13
        'check_rounds: 1.5', // 14
        '',
      ].join('\n'),
    );

    expect(where(problems)).toEqual([
      '1:1 task',
      '1:1 allow',
      '1:5 id',
      '2:1 alow',
      '4:10 budget.steps',
      '5:3 budget.stpes',
      '8:10 checks.1.run',
      '9:5 checks.1.nmae',
      '10:5 checks.2',
      '11:10 sandbox',
      '12:10 network',
      '13:13 env.1',
      '14:15 check_rounds',
    ]);
    for (const p of problems) console.log(formatProblem(p));
  });
});
