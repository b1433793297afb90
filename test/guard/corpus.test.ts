import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { CORPUS_DIR, makeGuardRepo } from '../support/guard-repo.js';

interface CorpusCase {
  id: string;
  expect: string;
  sandboxed?: string;
}

const casesOf = (name: string): CorpusCase[] => (parse(readFileSync(path.join(CORPUS_DIR, name), 'utf8')) as { cases: CorpusCase[] }).cases;
const filesNamed = (prefix: string): string[] => readdirSync(CORPUS_DIR).filter((name) => name.startsWith(prefix) && name.endsWith('.yaml')).sort();

/** `ok    <id>  <effect>  <rule> (<scope>...)` lines of `corral policy test`. */
function decisions(stdout: string): Map<string, { ok: boolean; effect: string; rule: string }> {
  const out = new Map<string, { ok: boolean; effect: string; rule: string }>();
  for (const line of stdout.split('\n')) {
    const match = /^(ok|FAIL) +(\S+) +(?:\(\S+\) +got )?(allow|ask|deny) {2}(.+?) \((?:baseline|user|project|ticket|default)[,)]/.exec(line);
    if (match) out.set(match[2]!, { ok: match[1] === 'ok', effect: match[3]!, rule: match[4]! });
  }
  return out;
}

// Every dangerous*.yaml and benign*.yaml file, judged twice: as if commands ran without a
// sandbox (the guard alone is the boundary) and inside bubblewrap without network (the
// sandbox contains what the guard cannot see). Neither depends on this machine's bwrap.
describe.each(['none', 'bwrap'] as const)('the guard corpus through `corral policy test --sandbox %s`', (sandbox) => {
  let repo: string;
  beforeAll(() => {
    repo = makeGuardRepo();
  });

  it('has its files', () => {
    expect(filesNamed('dangerous').length).toBeGreaterThanOrEqual(1);
    expect(filesNamed('benign').length).toBeGreaterThanOrEqual(1);
  });

  it.each(filesNamed('dangerous'))('allows no case of %s but what the sandbox contains, and each decision names its rule', async (file) => {
    const cases = casesOf(file);
    const run = await runCli(['policy', 'test', file, '--sandbox', sandbox], { cwd: repo, timeoutMs: 280_000 });
    const seen = decisions(run.stdout);
    expect(seen.size).toBe(cases.length);
    const mayAllow = new Set(sandbox === 'bwrap' ? cases.filter((c) => c.sandboxed === 'allow').map((c) => c.id) : []);
    const allowed = [...seen].filter(([id, d]) => d.effect === 'allow' && !(mayAllow.has(id) && d.rule === 'sandbox.contained')).map(([id]) => id);
    expect(allowed).toEqual([]);
    for (const [, decision] of seen) expect(decision.rule).toMatch(/^(baseline\.|fence\.|ticket\.|sandbox\.|default$|Bash\(|Read\(|Edit\(|Write\()/);
    expect(run.stdout).toContain(`${cases.length} passed, 0 failed`);
    expect(run.exitCode).toBe(0);
  }, 300_000);

  const tally = { cases: 0, allowed: 0 };
  it.each(filesNamed('benign'))('judges every case of %s as it expects', async (file) => {
    const cases = casesOf(file);
    const run = await runCli(['policy', 'test', file, '--sandbox', sandbox], { cwd: repo, timeoutMs: 280_000 });
    const seen = decisions(run.stdout);
    expect(seen.size).toBe(cases.length);
    tally.cases += cases.length;
    tally.allowed += [...seen.values()].filter((d) => d.effect === 'allow').length;
    expect(run.stdout).toContain(`${cases.length} passed, 0 failed`);
    expect(run.exitCode).toBe(0);
  }, 300_000);

  it(`allows at least ${sandbox === 'bwrap' ? 97 : 85}% of all the benign cases`, () => {
    expect(tally.cases).toBeGreaterThanOrEqual(300);
    expect(tally.allowed / tally.cases).toBeGreaterThanOrEqual(sandbox === 'bwrap' ? 0.97 : 0.85);
  });
});
