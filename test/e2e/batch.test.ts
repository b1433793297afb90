import { execa } from 'execa';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { validateXML } from 'xmllint-wasm';
import { jsonLines, PROJECT_ROOT, runCli } from '../support/cli.js';
import { runInPty } from '../support/pty.js';
import { commitFiles, extraWorktrees, gitIn, repoWithFiles, tempDir } from '../support/repo.js';

// A folder of replay tickets through the real CLI: parallel worktrees, shards, reports.

interface TicketSpec {
  /** The Bash command the agent runs after writing its file. */
  command?: string;
  /** The ticket's check (default: the file exists). */
  check?: string;
  /** Extra ticket YAML. */
  extra?: string;
}

/** Ticket `id` writes `out/<id>.txt`, runs `command`, and is checked. */
function ticketFiles(id: string, spec: TicketSpec = {}): Record<string, string> {
  const tools = [`      - Write: {file_path: out/${id}.txt, content: "${id}\\n"}`];
  if (spec.command) tools.push(`      - Bash: {command: ${JSON.stringify(spec.command)}}`);
  return {
    [`replay/${id}.yaml`]: `turns:\n  - tools:\n${tools.join('\n')}\n  - text: done\n`,
    [`tickets/${id}.yaml`]: [
      `id: ${id}`,
      `task: write out/${id}.txt`,
      `allow: ["out/${id}.txt"]`,
      'sandbox: none',
      `model: replay:../replay/${id}.yaml`,
      `checks: [${JSON.stringify(spec.check ?? `test -f out/${id}.txt`)}]`,
      spec.extra ?? '',
    ].join('\n'),
  };
}

function repoWithTickets(specs: Record<string, TicketSpec>): string {
  return repoWithFiles(Object.assign({ 'README.md': 'batch fixture\n' }, ...Object.entries(specs).map(([id, spec]) => ticketFiles(id, spec))), 'corral-batch-');
}

function traceEvents(file: string): Record<string, any>[] {
  return readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
}

const SCHEMAS = ['schema/junit.xsd', 'fixtures/junit/junit-10.xsd'].map((file) => ({ fileName: path.basename(file), contents: readFileSync(path.join(PROJECT_ROOT, file), 'utf8') }));

/** What the repository's schema and the Jenkins junit-10 schema find wrong with `xml`. */
async function junitProblems(xml: string): Promise<string[]> {
  const problems: string[] = [];
  for (const schema of SCHEMAS) {
    const result = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [schema] });
    problems.push(...result.errors.map((error) => `${schema.fileName}: ${error.rawMessage}`));
  }
  return problems;
}

describe('a folder of tickets with --jobs 4', () => {
  const ids = Array.from({ length: 9 }, (_, i) => `t${i + 1}`);
  let repo: string;
  let run: Awaited<ReturnType<typeof runCli>>;

  beforeAll(async () => {
    repo = repoWithTickets(Object.fromEntries(ids.map((id) => [id, { command: 'sleep 0.5' }])));
    run = await runCli(['run', 'tickets', '--jobs', '4', '--json'], { cwd: repo, timeoutMs: 240_000 });
  }, 300_000);

  it('runs every ticket, each to its own branch, and exits 0 with the totals last', () => {
    expect(run.exitCode, run.stderr).toBe(0);
    const { tickets, totals } = jsonLines(run.stdout);
    expect(tickets.map((t) => t.ticket.id).sort()).toEqual([...ids].sort());
    expect(tickets.every((t) => t.status === 'passed')).toBe(true);
    expect(totals).toMatchObject({ type: 'totals', tickets: 9, byStatus: { passed: 9 }, exitCode: 0, shards: [] });
    for (const id of ids) {
      // Each branch holds its own ticket's file and nothing of the others: no shared state.
      expect(gitIn(repo, ['diff', '--name-only', 'HEAD', `corral/${id}`]).trim()).toBe(`out/${id}.txt`);
    }
  });

  it('gives each ticket its own worktree, runs at most 4 at once (and more than 1), and removes them all', () => {
    const { tickets } = jsonLines(run.stdout);
    const spans = tickets.map((t) => {
      const events = traceEvents(t.trace);
      return {
        dir: events.find((e) => e.type === 'worktree')!.dir as string,
        start: Date.parse(events[0]!.time),
        end: Date.parse(events.at(-1)!.time),
      };
    });
    expect(new Set(spans.map((s) => s.dir)).size).toBe(9);
    for (const span of spans) expect(existsSync(span.dir)).toBe(false);
    expect(extraWorktrees(repo)).toEqual([]);
    const overlap = Math.max(...spans.map((s) => spans.filter((o) => o.start <= s.start && s.start < o.end).length));
    expect(overlap).toBeGreaterThan(1);
    expect(overlap).toBeLessThanOrEqual(4);
  });
});

describe('shards', () => {
  const ids = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel'];
  const noop: TicketSpec = { extra: 'allow_empty: true' };

  async function shardRun(repo: string, index: number, count: number): Promise<{ ids: string[]; stdout: string; stderr: string; exitCode: number }> {
    const run = await runCli(['run', 'tickets', '--shard', `${index}/${count}`, '--jobs', '2', '--json'], { cwd: repo, timeoutMs: 240_000 });
    return { ids: jsonLines(run.stdout).tickets.map((t) => t.ticket.id), ...run };
  }

  it('cover the folder exactly once, and adding a ticket moves no other ticket', async () => {
    const repo = repoWithTickets(Object.fromEntries(ids.map((id) => [id, noop])));
    const before = await Promise.all([1, 2, 3].map((i) => shardRun(repo, i, 3)));
    expect(before.flatMap((s) => s.ids).sort()).toEqual([...ids].sort());
    expect(before.every((s) => s.exitCode === 0)).toBe(true);

    commitFiles(repo, ticketFiles('india', noop));
    const after = await Promise.all([1, 2, 3].map((i) => shardRun(repo, i, 3)));
    expect(after.flatMap((s) => s.ids).sort()).toEqual([...ids, 'india'].sort());
    for (let i = 0; i < 3; i++) {
      expect(after[i]!.ids.filter((id) => id !== 'india').sort()).toEqual(before[i]!.ids.sort());
    }
    const totals = after.map((s) => jsonLines(s.stdout).totals);
    expect(totals.map((t) => t.shards)).toEqual([[{ index: 1, count: 3 }], [{ index: 2, count: 3 }], [{ index: 3, count: 3 }]]);
  }, 300_000);

  it('report merge joins the shard reports into one summary, one JUnit file and one exit code', async () => {
    const repo = repoWithTickets({ ...Object.fromEntries(ids.map((id) => [id, noop])), broken: { check: 'false' } });
    const dir = tempDir('corral-reports-');
    const shards = await Promise.all([1, 2].map((i) => shardRun(repo, i, 2)));
    const files = shards.map((shard, i) => {
      const file = path.join(dir, `shard-${i + 1}.jsonl`);
      writeFileSync(file, shard.stdout);
      return file;
    });
    // On failure, say why each ticket that did not pass ended as it did.
    const why = shards.flatMap((s) => jsonLines(s.stdout).tickets.filter((t) => t.status !== 'passed').map((t) => `${t.ticket.id}: ${t.status}: ${t.reason}`));
    expect(shards.map((s) => s.exitCode).sort(), why.join('\n')).toEqual([0, 1]);

    const merged = await runCli(['report', 'merge', ...files, '--junit', path.join(dir, 'junit.xml'), '--json'], { cwd: repo });
    expect(merged.exitCode).toBe(1);
    const { tickets, totals } = jsonLines(merged.stdout);
    expect(tickets.map((t) => t.ticket.id).sort()).toEqual([...ids, 'broken'].sort());
    expect(totals).toMatchObject({ tickets: 9, byStatus: { passed: 8, failed: 1 }, exitCode: 1, shards: [{ index: 1, count: 2 }, { index: 2, count: 2 }] });
    const xml = readFileSync(path.join(dir, 'junit.xml'), 'utf8');
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toContain('tests="9"');
    expect(xml).toContain('failures="1"');

    // The same reporters as a run's: named, json alone prints what --json does.
    const named = await runCli(['report', 'merge', ...files, '--reporter', 'json'], { cwd: repo });
    expect(named.stdout).toBe(merged.stdout);

    const table = await runCli(['report', 'merge', ...files], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(table.stdout).toContain('corral: 9 tickets · 1 failed, 8 passed');
    expect(table.stdout).toMatch(/✘ FAILED\s+broken/);

    // A shard whose report never arrived: said plainly, and the merge does not pass.
    const partial = await runCli(['report', 'merge', files[0]!], { cwd: repo, env: { NO_COLOR: '1' } });
    expect(partial.exitCode).toBe(64);
    expect(partial.stderr).toContain('no report for shard 2/2');

    // A report cut short, and a file that is not a report.
    const cut = path.join(dir, 'cut.jsonl');
    writeFileSync(cut, shards[0]!.stdout.trim().split('\n').slice(0, -1).join('\n'));
    expect((await runCli(['report', 'merge', cut, files[1]!], { cwd: repo })).stderr).toContain('ends without its totals line');
    const junk = path.join(dir, 'junk.jsonl');
    writeFileSync(junk, `${shards[0]!.stdout.split('\n')[0]}\nnot json\n`);
    const bad = await runCli(['report', 'merge', junk], { cwd: repo });
    expect(bad.exitCode).toBe(64);
    expect(bad.stderr).toContain('junk.jsonl:2');
  }, 300_000);
});

describe('outcomes of a batch', () => {
  it('--junit writes a schema-valid report and the batch exits with the most severe code', async () => {
    const repo = repoWithTickets({ good: {}, failing: { check: 'echo "expected <3> & got 4"; false' }, stray: { check: 'echo changed >> README.md' } });
    const run = await runCli(['run', 'tickets', '--jobs', '3', '--junit', 'junit.xml'], { cwd: repo, env: { NO_COLOR: '1', CI: 'true' } });
    expect(run.exitCode).toBe(2);
    const xml = readFileSync(path.join(repo, 'junit.xml'), 'utf8');
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toMatch(/<testsuites name="corral" tests="3" failures="2"/);
    expect(xml).toContain('<property name="check:test -f out/good.txt" value="passed"/>');
    expect(xml).toContain('expected &lt;3&gt; &amp; got 4');
    expect(xml).toContain('type="fence_violated"');
    // CI: plain lines on stderr, each summary then the table on stdout.
    expect(run.stderr).toMatch(/^\[good\] step 1/m);
    expect(run.stdout).toContain('corral: 3 tickets · 1 fence violated, 1 failed, 1 passed');
    expect(run.stdout.indexOf('corral: 3 tickets')).toBeGreaterThan(run.stdout.lastIndexOf('trace'));
  }, 180_000);

  it('--reporter json --reporter junit: JSON lines on stdout, the JUnit file, and none of the defaults', async () => {
    const repo = repoWithTickets({ fine: {}, flunks: { check: 'false' } });
    const summary = path.join(tempDir('corral-gh-'), 'summary.md');
    // Under GitHub Actions the defaults would add annotations and a step summary; named reporters replace them.
    const env = { NO_COLOR: '1', CI: 'true', GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: repo, GITHUB_STEP_SUMMARY: summary };
    const run = await runCli(['run', 'tickets', '--reporter', 'json', '--reporter', 'junit', '--junit', 'out.xml'], { cwd: repo, env });
    expect(run.exitCode, run.stderr).toBe(1);
    const { tickets, totals } = jsonLines(run.stdout);
    expect(Object.fromEntries(tickets.map((t) => [t.ticket.id, t.status]))).toEqual({ fine: 'passed', flunks: 'failed' });
    expect(totals).toMatchObject({ tickets: 2, byStatus: { passed: 1, failed: 1 }, exitCode: 1 });
    const xml = readFileSync(path.join(repo, 'out.xml'), 'utf8');
    expect(await junitProblems(xml)).toEqual([]);
    expect(xml).toMatch(/<testsuites name="corral" tests="2" failures="1" errors="0"/);
    expect(xml).toMatch(/<testsuite name="flunks"[^>]*>\n\s*<properties>[\s\S]*<testcase name="flunks" classname="tickets\/flunks.yaml" file="tickets\/flunks.yaml"[^>]*>\n\s*<failure type="failed"/);
    // No terminal reporter: no progress lines; no github reporter: no annotations, no step summary.
    expect(run.stderr).toBe('');
    expect(existsSync(summary)).toBe(false);

    // A misspelt name is refused before anything runs.
    const typo = await runCli(['run', 'tickets', '--reporter', 'jsno'], { cwd: repo, env: { NO_COLOR: '1', CI: 'true' } });
    expect(typo.exitCode).toBe(64);
    expect(typo.stderr).toContain('--reporter "jsno": no such reporter; did you mean json?');
    expect(typo.stdout).toBe('');
    const junitWithoutFile = await runCli(['run', 'tickets', '--reporter', 'junit'], { cwd: repo, env: { NO_COLOR: '1', CI: 'true' } });
    expect(junitWithoutFile.exitCode).toBe(64);
    expect(junitWithoutFile.stderr).toContain('--junit <file>');
  }, 180_000);

  it('--bail starts no new ticket after the first failure and lets the running one finish', async () => {
    const repo = repoWithTickets({ a1: { check: 'false' }, a2: { command: 'sleep 3' }, a3: {}, a4: {} });
    const run = await runCli(['run', 'tickets', '--jobs', '2', '--bail', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(1);
    const { tickets, totals } = jsonLines(run.stdout);
    const byId = Object.fromEntries(tickets.map((t) => [t.ticket.id, t]));
    expect(byId.a1).toMatchObject({ type: 'run', status: 'failed' });
    expect(byId.a2).toMatchObject({ type: 'run', status: 'passed' });
    for (const id of ['a3', 'a4']) expect(byId[id]).toMatchObject({ type: 'skipped', cause: 'bail', exitCode: null });
    expect(byId.a3.reason).toContain('a1 did not pass');
    expect(totals).toMatchObject({ tickets: 4, byStatus: { failed: 1, passed: 1, skipped: 2 }, exitCode: 1 });
    expect(extraWorktrees(repo)).toEqual([]);
  }, 180_000);

  it('--max-usd starts a ticket only while what is left covers its budget.usd, and needs every ticket to have one', async () => {
    const repo = repoWithTickets({
      m1: { extra: 'budget: {usd: 0.6}' },
      m2: { extra: 'budget: {usd: 0.6}' },
      m3: { extra: 'budget: {usd: 2}' },
    });
    const run = await runCli(['run', 'tickets', '--jobs', '4', '--max-usd', '1', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(3);
    const { tickets } = jsonLines(run.stdout);
    const byId = Object.fromEntries(tickets.map((t) => [t.ticket.id, t]));
    // Replay costs nothing, so m2 starts once m1 gives its reservation back; m3 never fits.
    expect(byId.m1.status).toBe('passed');
    expect(byId.m2.status).toBe('passed');
    expect(byId.m3).toMatchObject({ type: 'skipped', cause: 'max_usd', exitCode: 3 });
    expect(byId.m3.reason).toBe("--max-usd $1.00: $1.00 left, and this ticket's budget.usd is $2.00");

    commitFiles(repo, ticketFiles('uncapped'));
    const refused = await runCli(['run', 'tickets', '--max-usd', '1'], { cwd: repo });
    expect(refused.exitCode).toBe(64);
    expect(refused.stderr).toMatch(/tickets\/uncapped\.yaml:1:1.*budget\.usd/);
    expect(refused.stdout).toBe('');
  }, 180_000);

  it('under GitHub Actions: an ::error annotation per failed ticket and a table in the step summary', async () => {
    const repo = repoWithTickets({ ok1: {}, bad1: { check: 'false' } });
    const summary = path.join(tempDir('corral-gh-'), 'summary.md');
    writeFileSync(summary, '# earlier step\n');
    const run = await runCli(['run', 'tickets'], { cwd: repo, env: { GITHUB_ACTIONS: 'true', CI: 'true', GITHUB_WORKSPACE: repo, GITHUB_STEP_SUMMARY: summary, NO_COLOR: '1' } });
    expect(run.exitCode).toBe(1);
    const annotations = run.stdout.split('\n').filter((line) => line.startsWith('::'));
    expect(annotations).toHaveLength(1);
    expect(annotations[0]).toMatch(/^::error file=tickets\/bad1\.yaml,title=corral%3A bad1 failed::/);
    const markdown = readFileSync(summary, 'utf8');
    expect(markdown.startsWith('# earlier step\n')).toBe(true);
    expect(markdown).toContain('| Ticket | Status | Steps | Tokens | Cost | Time | Why |');
    expect(markdown).toMatch(/\| bad1.*\| .*failed/);
  }, 180_000);

  it('takes quoted globs and several paths, each ticket once', async () => {
    const repo = repoWithTickets({ g1: {}, g2: {}, g3: {} });
    const run = await runCli(['run', 'tickets/g[12].yaml', 'tickets/g1.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    expect(jsonLines(run.stdout).tickets.map((t) => t.ticket.id).sort()).toEqual(['g1', 'g2']);
    const none = await runCli(['run', 'tickets/zz*.yaml'], { cwd: repo });
    expect(none.exitCode).toBe(64);
    expect(none.stderr).toContain('matches no ticket file');
  }, 180_000);

  it('SIGTERM (a cancelled CI job) interrupts the running tickets, starts no other, leaves no worktree and exits 130', async () => {
    const repo = repoWithTickets({ s1: { command: 'sleep 600' }, s2: { command: 'sleep 600' }, s3: {}, s4: {} });
    const child = execa('node', [path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'run', 'tickets', '--jobs', '2', '--json'], { cwd: repo, reject: false, stdin: 'ignore', env: { NO_COLOR: '1', CI: 'true' } });
    // Both running tickets are in their sleep: each has answered step 1 and has a worktree.
    await new Promise<void>((resolve) => {
      let seen = '';
      child.stderr!.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (['s1', 's2'].every((id) => seen.includes(`[${id}] step 1`) && seen.includes(`[${id}] worktree at`))) resolve();
      });
    });
    const worktrees = extraWorktrees(repo);
    expect(worktrees).toHaveLength(2);
    child.kill('SIGTERM');
    const result = await child;
    expect(result.exitCode).toBe(130);
    const { tickets, totals } = jsonLines(String(result.stdout));
    const byId = Object.fromEntries(tickets.map((t) => [t.ticket.id, t]));
    expect(byId.s1.status).toBe('interrupted');
    expect(byId.s2.status).toBe('interrupted');
    expect(byId.s3).toMatchObject({ type: 'skipped', cause: 'interrupted' });
    expect(byId.s4).toMatchObject({ type: 'skipped', cause: 'interrupted' });
    expect(totals.exitCode).toBe(130);
    expect(extraWorktrees(repo)).toEqual([]);
    for (const dir of worktrees) expect(existsSync(dir)).toBe(false);
  }, 180_000);

  it('in a terminal: one live line per running ticket, then the table', async () => {
    const repo = repoWithTickets({ v1: { command: 'sleep 1' }, v2: { command: 'sleep 1' } });
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', XDG_CONFIG_HOME: path.join(repo, 'no-config'), NO_COLOR: '1' };
    const run = await runInPty(['node', path.join(PROJECT_ROOT, 'bin/corral.cjs'), 'run', 'tickets', '--jobs', '2'], { cwd: repo, env, timeoutMs: 120_000 });
    expect(run.exitCode).toBe(0);
    expect(run.output).toMatch(/▸.*v1.*step \d/);
    expect(run.output).toMatch(/▸.*v2.*step \d/);
    // The redraw erases the running lines in place.
    expect(run.output).toContain('\x1b[J');
    expect(run.output).toMatch(/corral: 2 tickets · 2 passed/);
  }, 180_000);
});
