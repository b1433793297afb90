import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// A failure shows its cause: the end of a failed setup's or check's output in the summary
// (redacted, bounded in lines and columns), each tool result's output in the trace (redacted
// and capped), and `corral trace` listing the failures with their output. And `corral trace`
// refuses what is not a trace.

const TOKEN = 'deploy-token-value-8f3a91c2e4';
const KEY = `sk-ant-api03-${'Q'.repeat(90)}AA`;
const ENV = { NO_COLOR: '1', DEPLOY_TOKEN: TOKEN };

/** A repository whose `conf.txt` holds a host secret and a key, so output that shows it must be redacted. */
function repo(ticket: string, replay = 'turns:\n  - text: done\n'): string {
  return repoWithFiles(
    {
      'src/a.txt': 'a\n',
      'conf.txt': `token=${TOKEN}\nkey=${KEY}\n`,
      'replay.yaml': replay,
      't.yaml': `task: t\nallow: ["src/**"]\nsandbox: none\nmodel: replay:replay.yaml\n${ticket}`,
    },
    'corral-cause-',
  );
}

// 40 numbered lines, the secrets, then a line far wider than any terminal, then an exit.
const NOISY = `for i in $(seq 1 40); do echo line-$i; done; cat conf.txt; head -c 600 /dev/zero | tr '\\\\0' w; echo; echo the-last-line`;

function expectBounded(stdout: string): void {
  // The output's lines, under their command: each within the width a log without a terminal gets.
  for (const line of stdout.split('\n').filter((l) => l.includes('│'))) expect(Array.from(line).length).toBeLessThanOrEqual(120);
  expect(stdout).not.toContain(TOKEN);
  expect(stdout).not.toContain(KEY.slice(0, 30));
}

describe('the summary shows why a setup or a check failed', () => {
  it('a failed setup: its last lines, redacted, cut to the width', async () => {
    const dir = repo(`setup: ["${NOISY}; exit 3"]\n`);
    const run = await runCli(['run', 't.yaml'], { cwd: dir, env: ENV });
    expect(run.exitCode).not.toBe(0);
    expect(run.stdout).toMatch(/setup\s+✘ .* exit 3/);
    expect(run.stdout).toContain('│ the-last-line');
    expect(run.stdout).toContain('│ line-40');
    expect(run.stdout).toMatch(/│ … \d+ earlier lines/);
    expect(run.stdout).not.toContain('│ line-1\n');
    expect(run.stdout).toContain('[REDACTED DEPLOY_TOKEN]');
    expect(run.stdout).toMatch(/│ w+…\n/);
    expectBounded(run.stdout);
  });

  it('a failed check: its last lines under the check, redacted', async () => {
    const dir = repo(`checks: ["${NOISY}; exit 5"]\ncheck_rounds: 0\n`);
    const run = await runCli(['run', 't.yaml'], { cwd: dir, env: ENV });
    expect(run.exitCode).toBe(1);
    expect(run.stdout).toMatch(/✘ .* exit 5/);
    expect(run.stdout).toContain('│ the-last-line');
    expect(run.stdout).toMatch(/│ key=\[REDACTED [a-z-]+\]/);
    expectBounded(run.stdout);
  });
});

describe('the trace keeps each tool result', () => {
  it('records the output, redacted, then capped at 8 KiB, and `corral trace` shows the failures with it', async () => {
    const replay = 'turns:\n  - tools:\n      - Bash: {command: "cat conf.txt; seq 1 5000"}\n      - Bash: {command: "echo the-cause-of-it >&2; exit 4"}\n  - text: done\n';
    const dir = repo('checks: ["echo check-said-why; exit 1"]\ncheck_rounds: 0\n', replay);
    const run = await runCli(['run', 't.yaml', '--json'], { cwd: dir, env: ENV });
    const report = runReport(run.stdout);
    const trace = readFileSync(report.trace, 'utf8');
    const results = trace
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
      .filter((event) => event.type === 'tool_result');
    expect(results).toHaveLength(2);
    const [long, failing] = results;
    expect(long.output).toMatch(/^token=\[REDACTED DEPLOY_TOKEN\]\nkey=\[REDACTED [a-z-]+\]\n1\n2\n3\n/);
    expect(long.output).toMatch(/\[\.\.\. \d+ bytes cut \.\.\.\]/);
    expect(long.output).toMatch(/\n4999\n5000\n?$/);
    expect(Buffer.byteLength(long.output)).toBeLessThanOrEqual(8 * 1024 + 40);
    expect(long.bytes).toBeGreaterThan(8 * 1024);
    expect(failing.isError).toBe(true);
    expect(failing.output).toContain('the-cause-of-it');
    expect(trace).not.toContain(TOKEN);
    expect(trace).not.toContain(KEY.slice(0, 30));

    const shown = await runCli(['trace', report.runDir], { cwd: dir, env: { NO_COLOR: '1' } });
    expect(shown.exitCode).toBe(0);
    expect(shown.stdout).toContain('failures');
    expect(shown.stdout).toMatch(/✘ check .* exit 1\n\s+│ check-said-why/);
    expect(shown.stdout).toMatch(/✘ Bash\(echo the-cause-of-it >&2; exit 4\)\s+step 1, error\n\s+│ the-cause-of-it/);
    const json = JSON.parse((await runCli(['trace', report.runDir, '--json'], { cwd: dir })).stdout);
    expect(json.failures).toEqual([
      { kind: 'check', name: 'echo check-said-why; exit 1', step: null, how: 'exit 1', output: expect.stringContaining('check-said-why') },
      { kind: 'tool', name: 'Bash(echo the-cause-of-it >&2; exit 4)', step: 1, how: 'error', output: expect.stringContaining('the-cause-of-it') },
    ]);

    // A trace of a corral that did not record the output still reads, its failures listed without it.
    const old = path.join(tempDir('corral-old-trace-'), 'trace.jsonl');
    const withoutOutput = trace
      .trim()
      .split('\n')
      .map((line) => {
        const event = JSON.parse(line);
        if (event.type === 'tool_result') delete event.output;
        return JSON.stringify(event);
      });
    writeFileSync(old, `${withoutOutput.join('\n')}\n`);
    expect(readFileSync(old, 'utf8')).not.toContain('4999');
    const older = await runCli(['trace', old, '--json'], { cwd: dir });
    expect(older.exitCode).toBe(0);
    expect(JSON.parse(older.stdout).failures.map((f: { kind: string }) => f.kind)).toEqual(['check', 'tool']);
  });
});

describe('corral trace on something that is not a trace', () => {
  const dir = tempDir('corral-not-trace-');
  const files: Record<string, string | Buffer> = {
    'notes.txt': 'hello\nworld\n',
    'random.bin': Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)),
    'package.json': '{\n  "name": "x",\n  "version": "1.0.0"\n}\n',
    'other.jsonl': '{"type":"request","id":1}\n{"type":"response","id":1}\n',
    'objects.jsonl': '{"a":1}\n[1,2]\n',
  };
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(dir, name), content);
  mkdirSync(path.join(dir, 'folder'));

  const cases: [string, RegExp][] = [
    ['notes.txt', /notes\.txt:1: not a corral trace: not a JSON line/],
    ['random.bin', /random\.bin:1: not a corral trace: not a JSON line/],
    ['package.json', /package\.json:1: not a corral trace: not a JSON line/],
    ['other.jsonl', /other\.jsonl:1: not a corral trace: type: unknown event type `request`/],
    ['objects.jsonl', /objects\.jsonl:1: not a corral trace: not a trace event/],
    ['folder', /folder is a directory without a trace\.jsonl/],
    ['/dev/null', /\/dev\/null is not a file/],
  ];
  for (const [name, message] of cases) {
    it(`${name}: exit 64, naming the file and the line`, async () => {
      const result = await runCli(['trace', name], { cwd: dir });
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.exitCode).toBe(64);
      expect(result.stdout).toBe('');
    });
  }
});
