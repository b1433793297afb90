import { execa } from 'execa';
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// The bench's reader of the flag strings bin/corral.cjs passes to v8.setFlagsFromString.
// @ts-expect-error: the bench's helpers are plain ESM without types.
import { cliV8Flags } from '../../bench/lib.mjs';
import { PROJECT_ROOT, runCli } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// bin/corral.cjs keeps V8 off its optimising tiers, for JavaScript and for the shell
// parser's WASM (docs/performance.md, "Speed tricks kept"). It sets its flags once Node has
// started, and a flag V8 reads only as it starts then does nothing; which flags those are
// changes from one V8 to the next (--max-opt and --liftoff-only did nothing on Node 24, and
// a run there spent a third of its CPU time compiling). So each check runs on this Node and
// on every Node named in CORRAL_TEST_NODES (paths separated by ':'; .ci/run installs 22
// and 24 there): users run them all. V8's own traces say which tier compiled what.

const FIXTURE = path.join(PROJECT_ROOT, 'test/fixtures/v8-tiers.cjs');
const TRACES = ['--trace-opt', '--trace-wasm-compilation-times'];

const otherNodes = (process.env.CORRAL_TEST_NODES ?? '').split(':').filter((file) => file !== '');
if (otherNodes.length === 0) process.stderr.write('V8 tiers: checked on this Node only (set CORRAL_TEST_NODES to other node executables, separated by ":")\n');

/** What a Node starts with here: nothing in NODE_OPTIONS to load or flag anything. */
function nodeEnv(): Record<string, string | undefined> {
  return { ...process.env, NODE_OPTIONS: undefined };
}

/**
 * The optimising tiers V8's traces say began compiling something: JavaScript's targets (a
 * compile V8 finishes later, begun before the flags were set, is not counted), and WASM's
 * compilers other than Liftoff.
 */
function optimisingTiers(output: string): { js: string[]; wasm: string[] } {
  const js = new Set([...output.matchAll(/^\[compiling method .* \(target (\w+)\)/gm)].map((match) => match[1]!).filter((tier) => /TURBOFAN|MAGLEV/.test(tier)));
  const wasm = new Set([...output.matchAll(/^Compiled function .* using (\w+),/gm)].map((match) => match[1]!));
  wasm.delete('Liftoff');
  return { js: [...js].sort(), wasm: [...wasm].sort() };
}

/**
 * The trace output from V8's first WASM compile on, which comes after the flags are set: in
 * the fixture a one-function module compiled for that, in the CLI the grammar. Before it,
 * Node resolving the script's path or loading its own modules (bin/corral.cjs) can already
 * make one or two of Node's functions hot enough for Maglev, the more the longer the path.
 */
function afterFlags(output: string): string {
  const first = output.search(/^Compiled function .* using Liftoff,/m);
  expect(first, 'no WASM compile in the trace').toBeGreaterThanOrEqual(0);
  return output.slice(first);
}

describe.each([process.execPath, ...otherNodes])('V8 tiers on %s', (node) => {
  it('left alone, hot code reaches the optimising tiers, as the traces show (the checks below can fail)', async () => {
    const { stdout } = await execa(node, [...TRACES, FIXTURE], { env: nodeEnv(), extendEnv: false });
    expect(stdout).toContain('done true');
    const tiers = optimisingTiers(stdout);
    expect(tiers.js.some((tier) => tier.startsWith('TURBOFAN'))).toBe(true);
    expect(tiers.wasm).toContain('TurboFan');
  });

  it("the CLI's flags, set after the start as the CLI sets them, keep the same code on the baseline tiers", async () => {
    // From a deep folder: the longer the script's path, the more work Node does resolving it
    // before the fixture's first line, as in a CI checkout, and the traces must not blame
    // the flags for that.
    const deep = path.join(tempDir('corral-tiers-'), ...Array.from({ length: 12 }, (_, i) => `a-rather-long-folder-name-${i}`));
    mkdirSync(path.join(deep, 'test/fixtures'), { recursive: true });
    copyFileSync(FIXTURE, path.join(deep, 'test/fixtures/v8-tiers.cjs'));
    symlinkSync(path.join(PROJECT_ROOT, 'node_modules'), path.join(deep, 'node_modules'));
    const { stdout } = await execa(node, [...TRACES, path.join(deep, 'test/fixtures/v8-tiers.cjs'), ...(cliV8Flags() as string[])], { env: nodeEnv(), extendEnv: false });
    expect(stdout).toContain('done true');
    expect(optimisingTiers(afterFlags(stdout))).toEqual({ js: [], wasm: [] });
  });

  it('a real run of 120 Bash steps compiles nothing with an optimising tier', async () => {
    const commands = ['ls -la', 'echo hi | cat', 'git status --short', 'head -n 2 README.md', 'true && echo ok'];
    const turns = Array.from({ length: 120 }, (_, i) => `  - tools:\n      - Bash: {command: ${JSON.stringify(commands[i % commands.length])}}`);
    const repo = repoWithFiles({
      'README.md': 'hello\nworld\n',
      'hot.replay.yaml': ['turns:', ...turns, '  - text: Done.', ''].join('\n'),
      'hot.ticket.yaml': 'task: hot code\nallow: ["**"]\nallow_empty: true\nsandbox: none\nbudget: {steps: 200}\nmodel: replay:hot.replay.yaml\n',
    });
    const run = await runCli(['run', '--unattended', '--runs-dir', tempDir('corral-tiers-runs-'), 'hot.ticket.yaml'], {
      cwd: repo,
      node,
      nodeArgs: TRACES,
    });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(optimisingTiers(afterFlags(run.stdout))).toEqual({ js: [], wasm: [] });
  });
});
