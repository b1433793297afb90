import { copyFileSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { CORPUS_DIR, makeGuardRepo } from '../support/guard-repo.js';

// The shell-eval corpus (bash evaluating text as code, tilde paths with a glob) through
// `corral policy test`, until the corpus test picks up every dangerous*/benign* file.
const FILES = ['dangerous-shell-eval.yaml', 'benign-shell-eval.yaml'];

const countOf = (name: string): number => (parse(readFileSync(path.join(CORPUS_DIR, name), 'utf8')) as { cases: unknown[] }).cases.length;

describe('the shell-eval guard corpus', () => {
  let repo: string;
  beforeAll(() => {
    repo = makeGuardRepo();
    for (const name of FILES) copyFileSync(path.join(CORPUS_DIR, name), path.join(repo, name));
  });

  it.each(FILES)('decides every case of %s as expected', async (name) => {
    const count = countOf(name);
    expect(count).toBeGreaterThanOrEqual(name.startsWith('dangerous') ? 40 : 10);
    const run = await runCli(['policy', 'test', name], { cwd: repo });
    expect(run.stdout).toContain(`${count} passed, 0 failed`);
    expect(run.exitCode).toBe(0);
  });
});
