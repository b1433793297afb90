import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { repoWithFiles } from '../support/repo.js';

// `corral trace` end to end: a replay ticket runs through the built CLI, then its trace is
// summarised and the numbers checked against the run's own JSON report; then the trace is
// cut in the middle of a line, as a crash would leave it, and must still summarise.

interface Report {
  runId: string;
  status: string;
  exitCode: number;
  steps: number;
  toolCalls: number;
  usage: { inputTokens: number; outputTokens: number; cacheReadTokens: number; cacheWriteTokens: number };
  costUsd: number | null;
  denied: { tool: string; rule: string; call: string }[];
  asked: { tool: string; rule: string; call: string; answer: string }[];
  checks: { name: string; passed: boolean }[];
  changes: unknown[];
  runDir: string;
  trace: string;
}

const REPLAY = `turns:
  - tools:
      - Bash: {command: "echo hello"}
      - Read: {file_path: /etc/shadow}
  - tools:
      - Bash: {command: "node scripts/gen.js 1"}
      - Write: {file_path: src/app.js, content: "export const app = 2;\\n"}
  - text: done
`;

async function runReplayTicket(): Promise<{ repo: string; report: Report }> {
  const repo = repoWithFiles(
    {
      'src/app.js': 'export const app = 1;\n',
      'scripts/gen.js': "require('fs').appendFileSync('src/gen.txt', 'x\\n');\n",
      'ticket.yaml': 'task: Change the app\nallow: ["src/**"]\nchecks: ["test -f src/app.js"]\nmodel: replay:replay.yaml\n# the strict guard, with no sandbox to contain the script: it is asked\nsandbox: none\n',
      'replay.yaml': REPLAY,
      'corral.yaml': 'policy:\n  deny:\n    - Read(/etc/**)\n',
    },
    'corral-trace-',
  );
  const run = await runCli(['run', 'ticket.yaml', '--json', '--unattended'], { cwd: repo });
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  if (!line) throw new Error(`no JSON report (exit ${run.exitCode}):\n${run.stdout}\n${run.stderr}`);
  return { repo, report: JSON.parse(line) as Report };
}

describe('corral trace', () => {
  it('summarises a run with the numbers of its report, as text and as JSON, and after a crash cut its trace', async () => {
    const { repo, report } = await runReplayTicket();
    expect(report.status).toBe('passed');
    expect(report.denied.map((d) => [d.call, d.rule])).toEqual([['Read(/etc/shadow)', expect.stringContaining('Read(/etc/**)')]]);
    expect(report.asked.map((a) => [a.call, a.answer])).toEqual([['Bash(node scripts/gen.js 1)', 'unattended']]);

    const json = await runCli(['trace', report.runDir, '--json'], { cwd: repo });
    expect(json.exitCode).toBe(0);
    const s = JSON.parse(json.stdout) as Record<string, any>;
    expect(s).toMatchObject({ runId: report.runId, finished: true, status: 'passed', exitCode: 0, steps: report.steps, toolCalls: report.toolCalls, costUsd: 0, skippedLines: 0 });
    expect(s.steps).toBe(3);
    expect(s.tokens).toEqual({
      input: report.usage.inputTokens,
      output: report.usage.outputTokens,
      cacheRead: report.usage.cacheReadTokens,
      cacheWrite: report.usage.cacheWriteTokens,
      total: report.usage.inputTokens + report.usage.outputTokens + report.usage.cacheReadTokens + report.usage.cacheWriteTokens,
    });
    expect(s.cacheHitRatio).toBe(0);
    expect(Object.fromEntries(s.tools.map((t: { tool: string; calls: number }) => [t.tool, t.calls]))).toEqual({ Bash: 2, Read: 1, Write: 1 });
    expect(s.denied.map((d: { call: string; rule: string }) => [d.call, d.rule])).toEqual(report.denied.map((d) => [d.call, d.rule]));
    expect(s.asked.map((a: { call: string; rule: string; answer: string }) => [a.call, a.rule, a.answer])).toEqual(report.asked.map((a) => [a.call, a.rule, 'refused']));
    expect(s.slowest).toHaveLength(4);
    expect(s.checks.results.map((c: { name: string; passed: boolean }) => [c.name, c.passed])).toEqual(report.checks.map((c) => [c.name, c.passed]));
    expect(s.fence).toMatchObject({ ok: true, changes: report.changes.length });

    // The trace file itself works as well as its run directory, and the text says the same.
    const text = await runCli(['trace', report.trace], { cwd: repo });
    expect(text.exitCode).toBe(0);
    expect(text.stdout).toContain(`status   passed (exit 0)`);
    expect(text.stdout).toContain(`steps    3 · ${report.toolCalls} tool calls · 1 denied · 1 asked`);
    expect(text.stdout).toContain(`✘ Read(/etc/shadow)  step 1, denied by ${report.denied[0]!.rule}`);
    expect(text.stdout).toContain(`? Bash(node scripts/gen.js 1)  step 2, asked by ${report.asked[0]!.rule}, refused`);
    expect(text.stdout).toContain('cost     $0.0000');

    // A crash: the trace ends in the middle of a line, before the checks and the end.
    const lines = readFileSync(report.trace, 'utf8').split('\n').filter((l) => l !== '');
    const cutAt = lines.findIndex((l) => l.includes('"type":"tool_result"') && l.includes('"tool":"Write"'));
    expect(cutAt).toBeGreaterThan(0);
    writeFileSync(report.trace, `${lines.slice(0, cutAt).join('\n')}\n${lines[cutAt]!.slice(0, Math.floor(lines[cutAt]!.length / 2))}`);

    const cut = await runCli(['trace', report.runDir], { cwd: repo });
    expect(cut.exitCode).toBe(0);
    expect(cut.stdout).toContain('unfinished: the trace ends at step 2');
    expect(cut.stdout).toContain('1 unreadable line skipped');
    expect(cut.stdout).toContain('✘ Read(/etc/shadow)');
    const cutJson = JSON.parse((await runCli(['trace', report.runDir, '--json'], { cwd: repo })).stdout) as Record<string, any>;
    expect(cutJson).toMatchObject({ finished: false, status: null, exitCode: null, lastStep: 2, steps: 2, toolCalls: 4, skippedLines: 1, checks: null, fence: null });
  });

  it('exits 64 with a clear message for a missing file or a directory without a trace', async () => {
    const repo = repoWithFiles({ 'a.txt': 'a\n' }, 'corral-trace-');
    const missing = await runCli(['trace', 'no-such-run'], { cwd: repo });
    expect(missing.exitCode).toBe(64);
    expect(missing.stderr).toContain('no such run directory or trace file: no-such-run');
    const empty = await runCli(['trace', repo], { cwd: repo });
    expect(empty.exitCode).toBe(64);
    expect(empty.stderr).toContain(`${repo} is a directory without a trace.jsonl`);
    expect(path.isAbsolute(repo)).toBe(true);
  });
});
