import { execa } from 'execa';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { startMessagesServer, type MessagesServer } from '../support/messages-server.js';
import { preloadProbe } from '../support/probe.js';
import { commitFiles, makeDemoRepo } from '../support/repo.js';

// Node compiles its own modules (node:http, node:child_process, ...) from a code cache built
// into it, which V8 refuses once the CLI has set its V8 flags: every such module a command
// loads after them is compiled from source, tens of ms of a run's start and of each Claude
// Code hook call. The CLI loads the ones its command can reach first (bin/corral.cjs, from
// the list the build writes). A probe preloaded into corral's process marks where in
// Node's list of loaded modules the first flag was set.

const FAKE_KEY = 'sk-ant-test-0123456789abcdefghijklmnop';

let server: MessagesServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface LoadOrder {
  /** Node's modules loaded before the CLI set its first V8 flag. */
  before: string[];
  /** Those loaded after it. */
  after: string[];
}

/** A `--require` probe for corral's process (not the commands it starts) and where it writes. */
function loadOrderProbe(): { nodeOptions: string; read: () => LoadOrder } {
  const probe = preloadProbe('corral-load-order-', (dir) => [
    `if (/corral\\.cjs$/.test(process.argv[1] ?? '')) {`,
    `  const v8 = require('node:v8');`,
    `  const setFlags = v8.setFlagsFromString;`,
    `  let mark;`,
    `  v8.setFlagsFromString = function (flags) { mark ??= process.moduleLoadList.length; return setFlags.call(this, flags); };`,
    `  process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(path.join(dir, 'order.json'))}, JSON.stringify({ mark, loaded: process.moduleLoadList })));`,
    `}`,
  ]);
  const out = path.join(probe.dir, 'order.json');
  return {
    nodeOptions: probe.nodeOptions,
    read: () => {
      const { mark, loaded } = JSON.parse(readFileSync(out, 'utf8')) as { mark?: number; loaded: string[] };
      // Without a mark the CLI set no flag, and the rest of the test would prove nothing.
      expect(mark).toEqual(expect.any(Number));
      return { before: loaded.slice(0, mark), after: loaded.slice(mark) };
    },
  };
}

/** Node's public modules (node:http is `NativeModule http`), leaving out its internal ones. */
const publicModules = (loaded: string[]): string[] => loaded.filter((name) => name.startsWith('NativeModule ') && !name.startsWith('NativeModule internal/'));

describe("Node's own modules load before the CLI's V8 flags", () => {
  it('in a run on the real SDK path: none of them after the flags, the HTTP client before', async () => {
    server = await startMessagesServer([
      { content: [{ type: 'tool_use', id: 'toolu_01', name: 'Bash', input: { command: 'echo hi' } }] },
      { content: [{ type: 'text', text: 'Done.' }] },
    ]);
    const repo = makeDemoRepo();
    commitFiles(repo, { 'fixtures/tickets/plain.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nmodel: claude-sonnet-4-6\n' });
    const probe = loadOrderProbe();
    const run = await runCli(['run', 'fixtures/tickets/plain.yaml', '--json'], {
      cwd: repo,
      env: { ANTHROPIC_API_KEY: FAKE_KEY, ANTHROPIC_BASE_URL: server.url, NODE_OPTIONS: probe.nodeOptions },
    });
    expect(runReport(run.stdout)).toMatchObject({ status: 'passed', steps: 2 });
    const { before, after } = probe.read();
    expect(publicModules(after)).toEqual([]);
    expect(before).toEqual(expect.arrayContaining(['NativeModule http', 'NativeModule child_process', 'NativeModule stream/web']));
  });

  it("as Claude Code's PreToolUse hook: none of them after the flags", async () => {
    const repo = makeDemoRepo();
    const probe = loadOrderProbe();
    const call = { hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls -la' }, tool_use_id: 't', cwd: repo };
    const result = await execa('node', [path.join(PROJECT_ROOT, 'bin', 'corral.cjs'), 'guard', 'hook', '--agent', 'claude-code'], {
      cwd: repo,
      input: JSON.stringify(call),
      env: { NODE_OPTIONS: probe.nodeOptions },
      reject: false,
    });
    expect(result.exitCode).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: 'allow' } });
    expect(publicModules(probe.read().after)).toEqual([]);
  });

  it('loads nothing a command cannot reach: --version never loads the HTTP client', async () => {
    const probe = loadOrderProbe();
    const run = await runCli(['--version'], { cwd: PROJECT_ROOT, env: { NODE_OPTIONS: probe.nodeOptions } });
    expect(run.exitCode).toBe(0);
    const { before, after } = probe.read();
    expect([...before, ...after]).not.toContain('NativeModule http');
  });
});
