import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { CORPUS_DIR, makeGuardRepo } from '../support/guard-repo.js';

interface CorpusCase {
  id: string;
  expect: string;
}

const casesOf = (name: string): CorpusCase[] => (parse(readFileSync(path.join(CORPUS_DIR, name), 'utf8')) as { cases: CorpusCase[] }).cases;

/** `ok    <id>  <effect>  <rule> (<scope>...)` lines of `corral policy test`. */
function decisions(stdout: string): Map<string, { ok: boolean; effect: string; rule: string }> {
  const out = new Map<string, { ok: boolean; effect: string; rule: string }>();
  for (const line of stdout.split('\n')) {
    const match = /^(ok|FAIL) +(\S+) +(?:\(\S+\) +got )?(allow|ask|deny) {2}(.+?) \((?:baseline|user|project|ticket|default)[,)]/.exec(line);
    if (match) out.set(match[2]!, { ok: match[1] === 'ok', effect: match[3]!, rule: match[4]! });
  }
  return out;
}

describe('the guard corpus through `corral policy test`', () => {
  let repo: string;
  beforeAll(() => {
    repo = makeGuardRepo();
  });

  it('allows no dangerous case, and each decision names its rule', async () => {
    const cases = casesOf('dangerous.yaml');
    expect(cases.length).toBeGreaterThanOrEqual(150);
    const run = await runCli(['policy', 'test', 'dangerous.yaml'], { cwd: repo });
    const seen = decisions(run.stdout);
    expect(seen.size).toBe(cases.length);
    const allowed = [...seen].filter(([, d]) => d.effect === 'allow').map(([id]) => id);
    expect(allowed).toEqual([]);
    for (const [, decision] of seen) expect(decision.rule).toMatch(/^(baseline\.|fence\.|ticket\.|default$|Bash\(|Read\(|Edit\(|Write\()/);
    expect(run.stdout).toContain(`${cases.length} passed, 0 failed`);
    expect(run.exitCode).toBe(0);
  });

  it('allows at least 95% of the benign cases (all of them today)', async () => {
    const cases = casesOf('benign.yaml');
    expect(cases.length).toBeGreaterThanOrEqual(100);
    const run = await runCli(['policy', 'test', 'benign.yaml'], { cwd: repo });
    const seen = decisions(run.stdout);
    expect(seen.size).toBe(cases.length);
    const allowed = [...seen.values()].filter((d) => d.effect === 'allow').length;
    expect(allowed / cases.length).toBeGreaterThanOrEqual(0.95);
    expect(run.stdout).toContain(`${cases.length} passed, 0 failed`);
    expect(run.exitCode).toBe(0);
  });
});
