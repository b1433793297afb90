import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { settingsFrom } from '../../src/config/settings.js';
import { listPrice } from '../../src/report/trace-summary.js';
import { runTicket } from '../../src/run/run-ticket.js';
import { loadTicket } from '../../src/ticket/load.js';
import { EVENT_TYPES, type RunEvent } from '../../src/trace/events.js';
import { createRunFold, foldRun, runResultOf, type RunFold } from '../../src/trace/fold.js';
import { readTrace } from '../../src/trace/read.js';
import type { RunResult } from '../../src/trace/result.js';
import { NO_USER_CONFIG, PROJECT_ROOT } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// Real runs (replay model, real worktree, guard, hooks, checks and fence) and their traces:
// every line the run wrote is read back strictly, loses no field to the schema, and folds
// into the facts of the result the run returned. This is what lets the run build its
// result from the fold of its events.

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/nonexistent', XDG_CONFIG_HOME: NO_USER_CONFIG };

async function run(repo: string, ticketFile: string): Promise<{ result: RunResult; live: RunEvent[] }> {
  const settings = settingsFrom(await loadConfig(repo, env, repo));
  const live: RunEvent[] = [];
  const result = await runTicket(await loadTicket(path.join(repo, ticketFile)), {
    keep: false,
    interrupt: new AbortController().signal,
    env,
    cwd: repo,
    settings,
    runsDir: tempDir('corral-runs-'),
    onEvent: (event) => live.push(event),
  });
  return { result, live };
}

/** Reads the run's trace strictly, checking the schema kept every field of every line. */
async function readStrictly(result: RunResult) {
  const read = await readTrace(result.trace, { mode: 'strict' });
  const raw = readFileSync(result.trace, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as unknown);
  expect(read.skipped).toEqual([]);
  expect(read.events).toEqual(raw);
  return read;
}

/** The run's own event, without the writer's envelope, as JSON keeps it. */
function withoutEnvelope(line: Record<string, unknown>): Record<string, unknown> {
  const { v: _v, seq: _seq, time: _time, run: _run, ...rest } = line;
  if (rest.type !== 'run_start') delete rest.ticket;
  if (!['context_cleared', 'context_compacted', 'model_request', 'model_response', 'tool_call', 'decision', 'approval', 'hook', 'tool_result'].includes(rest.type as string)) delete rest.step;
  return rest;
}

/** The facts a run's result holds that its events hold too. */
function evented(result: RunResult) {
  return {
    runId: result.runId,
    ticket: result.ticket,
    model: result.model,
    runDir: result.runDir,
    status: result.status,
    exitCode: result.exitCode,
    reason: result.reason,
    steps: result.steps,
    usage: result.usage,
    costUsd: result.costUsd,
    toolCalls: result.toolCalls,
    denied: result.denied,
    asked: result.asked,
    checks: result.checks,
    checkRoundsUsed: result.checkRoundsUsed,
    changes: result.changes,
    hostChanges: result.hostChanges ?? [],
    finalText: result.finalText,
    sandbox: result.sandbox,
  };
}

function factsOf(fold: RunFold) {
  return {
    runId: fold.start?.runId,
    ticket: fold.start?.ticket,
    model: fold.start?.model,
    runDir: fold.start?.runDir,
    status: fold.end?.status,
    exitCode: fold.end?.exitCode,
    reason: fold.end?.reason,
    steps: fold.steps,
    usage: fold.usage,
    costUsd: fold.costUsd,
    toolCalls: fold.toolCalls,
    denied: fold.denied,
    asked: fold.asked,
    checks: fold.checks,
    checkRoundsUsed: fold.checkRoundsUsed,
    changes: fold.fence?.verdicts ?? [],
    hostChanges: fold.hostChanges ?? [],
    finalText: fold.finalText,
    sandbox: fold.sandbox?.kind,
  };
}

const REPLAY = `turns:
  - tools:
      - Bash: {command: "echo hello"}
      - Read: {file_path: /etc/shadow}
  - tools:
      - Bash: {command: "node scripts/gen.js 1"}
      - Write: {file_path: src/app.js, content: "export const app = 2;\\n"}
  - text: Done.
  - tools:
      - Write: {file_path: src/flag.txt, content: "checked\\n"}
  - text: "Done now.\\nQUEUE: the docs of app are stale"
`;

describe('the trace of a real run', () => {
  const seen = new Set<string>();

  it('reads back strictly, field for field, and folds into the facts of the run’s result, live and from the file', async () => {
    const repo = repoWithFiles(
      {
        'src/app.js': 'export const app = 1;\n',
        'scripts/gen.js': "require('fs').appendFileSync('src/gen.txt', 'x\\n');\n",
        'ticket.yaml': [
          'task: Change the app',
          'allow: ["src/**"]',
          'setup: ["echo ready"]',
          'checks: ["test -f src/flag.txt"]',
          'check_rounds: 1',
          'model: replay:replay.yaml',
          'sandbox: none',
          '',
        ].join('\n'),
        'replay.yaml': REPLAY,
        // A deny, and two hooks on Bash: one that passes, one broken (exit 1), which the run warns of.
        'corral.yaml': [
          'policy:',
          '  deny:',
          '    - Read(/etc/**)',
          'hooks:',
          '  PreToolUse:',
          '    - matcher: Bash',
          '      hooks:',
          '        - {type: command, command: "cat >/dev/null"}',
          '        - {type: command, command: "cat >/dev/null; exit 1"}',
          '',
        ].join('\n'),
      },
      'corral-run-trace-',
    );
    const { result, live } = await run(repo, 'ticket.yaml');
    expect(result.status).toBe('passed');
    expect(result.checkRoundsUsed).toBe(2);
    expect(result.denied.map((d) => d.call)).toEqual(['Read(/etc/shadow)']);
    expect(result.asked.map((a) => [a.call, a.answer])).toEqual([['Bash(node scripts/gen.js 1)', 'unattended']]);
    expect(result.followUps).toEqual(['the docs of app are stale']);

    const read = await readStrictly(result);
    for (const event of read.events) seen.add(event.type);
    // What the writer wrote is what the run emitted, event for event.
    expect(read.events.map((line) => withoutEnvelope(line as unknown as Record<string, unknown>))).toEqual(JSON.parse(JSON.stringify(live)));

    const fromFile = foldRun(read.events, { price: listPrice });
    expect(factsOf(fromFile)).toEqual(evented(result));
    const liveFold = createRunFold({ price: listPrice });
    for (const event of live) liveFold.add(event);
    expect(factsOf(liveFold.current())).toEqual(evented(result));
    expect(fromFile.warnings).toEqual(result.warnings);
    expect(fromFile.worktree?.baseCommit).toBe(result.baseCommit);

    // The whole result, checks and all, is the fold of the file the run wrote.
    expect(runResultOf(fromFile)).toEqual(result);
  });

  it('without checks, the whole result is the fold of its events', async () => {
    const repo = repoWithFiles(
      {
        'src/app.js': 'export const app = 1;\n',
        'ticket.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:replay.yaml\nsandbox: none\n',
        'replay.yaml': 'turns:\n  - tools:\n      - Write: {file_path: src/app.js, content: "export const app = 3;\\n"}\n  - text: Written.\n',
      },
      'corral-run-trace-',
    );
    const { result, live } = await run(repo, 'ticket.yaml');
    expect(result.status).toBe('passed');
    expect(result.branch).toBeDefined();
    const read = await readStrictly(result);
    for (const event of read.events) seen.add(event.type);
    expect(runResultOf(foldRun(read.events, { price: listPrice }))).toEqual(result);
    expect(runResultOf(foldRun(live, { price: listPrice }))).toEqual(result);
  });

  it('a run its run.start rule denies: the gate, no worktree, and still the result from the fold', async () => {
    const repo = repoWithFiles(
      {
        'corral.yaml': 'policy:\n  rules:\n    - id: no-release\n      hook: run.start\n      when: \'"release" in ticket.labels\'\n      effect: deny\n      reason: release tickets are done by a person\n',
        'ticket.yaml': 'task: t\nallow: ["src/**"]\nlabels: [release]\nmodel: replay:replay.yaml\n',
        'replay.yaml': 'turns:\n  - text: never asked\n',
        'src/a.txt': 'a\n',
      },
      'corral-run-trace-',
    );
    const { result } = await run(repo, 'ticket.yaml');
    expect(result.status).toBe('blocked');
    const read = await readStrictly(result);
    for (const event of read.events) seen.add(event.type);
    const fold = foldRun(read.events, { price: listPrice });
    expect(fold.gate).toMatchObject({ effect: 'deny', rule: 'no-release' });
    expect(fold.worktree).toBeNull();
    expect(runResultOf(fold)).toEqual(result);
  });

  it('a long run with a small context window: cleared and compacted, every turn of the script played once, the result still the fold', async () => {
    const turns = Array.from({ length: 12 }, (_, i) => `  - tools:\n      - Bash: {command: "head -c 20000 /dev/zero | tr '\\\\0' a; echo ' turn ${i}'"}\n`).join('');
    const repo = repoWithFiles(
      {
        'src/app.js': 'export const app = 1;\n',
        'ticket.yaml': 'task: Print a lot, then write\nallow: ["src/**"]\nmodel: replay:replay.yaml\nsandbox: none\ncontext: {window: 32768, keep_tool_results: 1}\n',
        'replay.yaml': `turns:\n${turns}  - tools:\n      - Write: {file_path: src/app.js, content: "export const app = 4;\\n"}\n  - text: Written after it all.\n`,
      },
      'corral-run-trace-',
    );
    const { result, live } = await run(repo, 'ticket.yaml');
    expect(result.status).toBe('passed');
    expect(result.steps).toBe(14);
    expect(result.finalText).toBe('Written after it all.');
    expect(result.changes.map((c) => c.change.path)).toEqual(['src/app.js']);
    const read = await readStrictly(result);
    for (const event of read.events) seen.add(event.type);
    expect(read.events.map((line) => withoutEnvelope(line as unknown as Record<string, unknown>))).toEqual(JSON.parse(JSON.stringify(live)));
    const fold = foldRun(read.events, { price: listPrice });
    expect(fold.context.clears).toBeGreaterThan(0);
    expect(fold.context.compactions).toBeGreaterThan(0);
    expect(runResultOf(fold)).toEqual(result);
    // Each command the script names ran once, in order.
    const commands = read.events.flatMap((e) => (e.type === 'tool_call' && e.tool === 'Bash' ? [(e.input as { command: string }).command] : []));
    expect(commands.map((c) => c.slice(-7))).toEqual(Array.from({ length: 12 }, (_, i) => ` turn ${i}'`.slice(-7)));
  });

  it('under an agent CLI (the fake Claude Code), the trace reads back strictly and folds into the result', async () => {
    const fake = path.join(PROJECT_ROOT, 'test', 'fixtures', 'fake-claude.mjs');
    const repo = repoWithFiles(
      {
        'src/app.js': 'export const app = 1;\n',
        'corral.yaml': `agents:\n  claude-code:\n    command: ${JSON.stringify(fake)}\n`,
        'ticket.yaml': 'task: t\nallow: ["src/**"]\nagent: claude-code\nenv: {FAKE_AGENT_SCRIPT: fake.json}\n',
        'fake.json': JSON.stringify({ sessions: [[{ tool: 'Write', input: { file_path: 'src/app.js', content: 'export const app = 4;\n' } }, { text: 'Written.' }]] }),
      },
      'corral-run-trace-',
    );
    const { result, live } = await run(repo, 'ticket.yaml');
    expect(result.status).toBe('passed');
    const read = await readStrictly(result);
    for (const event of read.events) seen.add(event.type);
    expect(read.events.map((event) => event.type)).toContain('agent');
    expect(runResultOf(foldRun(read.events, { price: listPrice }))).toEqual(result);
    expect(runResultOf(foldRun(live, { price: listPrice }))).toEqual(result);
  });

  it('between them, the runs wrote every event type the schema names, and no other', () => {
    expect([...seen].sort()).toEqual([...EVENT_TYPES].sort());
  });
});
