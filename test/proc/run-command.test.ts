import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { cutMarker } from '../../src/text/output-cap.js';
import { runCommand, type RunCommandOptions } from '../../src/proc/run-command.js';
import { isAlive, makeTempDir } from '../tools/helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

function options(command: string, extra: Partial<RunCommandOptions> = {}): RunCommandOptions {
  return { command, cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 20_000, outputCap: 10_000, ...extra };
}

describe('runCommand', () => {
  test('success: exit 0 and the output', async () => {
    const result = await runCommand(options('echo hello'));
    expect(result).toMatchObject({ exitCode: 0, signal: null, timedOut: false, aborted: false, output: 'hello\n', totalBytes: 6 });
    expect(result.durationMs).toBeGreaterThanOrEqual(0);
  });

  test('a failing command gives the same shape with its exit code, stdout and stderr together', async () => {
    const result = await runCommand(options('echo out; echo err >&2; exit 3'));
    expect(result.exitCode).toBe(3);
    expect(result.timedOut).toBe(false);
    expect(result.output).toContain('out\n');
    expect(result.output).toContain('err\n');
  });

  test('runs in cwd', async () => {
    const result = await runCommand(options('pwd'));
    expect(result.output.trim()).toBe(dir);
  });

  test('a cwd that does not exist is a result, not an exception', async () => {
    const result = await runCommand(options('echo hi', { cwd: path.join(dir, 'missing') }));
    expect(result.exitCode).toBeNull();
    expect(result.output).toContain('failed to start');
  });

  test('stdin is at EOF: cat returns at once', async () => {
    const result = await runCommand(options('cat; echo done', { timeoutMs: 10_000 }));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: 'done\n' });
  });

  test('input is written to stdin, which is then closed', async () => {
    const result = await runCommand(options('cat; echo done', { input: '{"a":1}\n' }));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: '{"a":1}\ndone\n' });
  });

  test('input the command never reads is no error', async () => {
    const result = await runCommand(options('exit 0', { input: 'x'.repeat(1_000_000) }));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, output: '' });
  });

  test('separateStderr keeps stdout and stderr apart as well as together', async () => {
    const result = await runCommand(options('echo out; echo err >&2', { separateStderr: true }));
    expect(result).toMatchObject({ exitCode: 0, stdout: 'out\n', stderr: 'err\n' });
    expect(result.output).toContain('out\n');
    expect(result.output).toContain('err\n');
    const plain = await runCommand(options('echo out'));
    expect(plain.stdout).toBeUndefined();
    expect(plain.stderr).toBeUndefined();
  });

  test('with separateStderr a failure to start is on stderr', async () => {
    const result = await runCommand(options('echo hi', { cwd: path.join(dir, 'missing'), separateStderr: true }));
    expect(result.exitCode).toBeNull();
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('failed to start');
  });

  test('the environment is exactly the one given', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-fake-key-from-the-test');
    try {
      const result = await runCommand(options('env', { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CORRAL_PROBE: 'yes' } }));
      expect(result.output).not.toContain('ANTHROPIC_API_KEY');
      expect(result.output).not.toContain('sk-ant-fake');
      const names = result.output.trim().split('\n').map((line) => line.split('=')[0]);
      // bash itself sets PWD, SHLVL and _; nothing else may appear.
      expect(new Set(names)).toEqual(new Set(['PATH', 'CORRAL_PROBE', 'PWD', 'SHLVL', '_']));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('a large output is capped with head, tail and a marker', async () => {
    const result = await runCommand(options("head -c 5000000 /dev/zero | tr '\\0' a", { outputCap: 10_000 }));
    expect(result.exitCode).toBe(0);
    expect(result.totalBytes).toBe(5_000_000);
    expect(result.output).toBe(`${'a'.repeat(5_000)}${cutMarker(4_990_000)}${'a'.repeat(5_000)}`);
  });

  test('a flood of output keeps memory flat', async () => {
    const before = process.memoryUsage().rss;
    const result = await runCommand(options('yes | head -c 200000000', { outputCap: 10_000, timeoutMs: 60_000 }));
    expect(result.exitCode).toBe(0);
    expect(result.totalBytes).toBe(200_000_000);
    expect(result.output.length).toBeLessThan(10_100);
    // Holding the output would take 200 MB; the chunks in flight are far less.
    expect(process.memoryUsage().rss - before).toBeLessThan(100_000_000);
  });

  test('a timeout kills the whole process tree', async () => {
    const result = await runCommand(options('sleep 1000 & echo $!; sleep 1000', { timeoutMs: 300 }));
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', timedOut: true, aborted: false });
    const grandchild = Number(result.output.trim());
    expect(grandchild).toBeGreaterThan(0);
    await vi.waitFor(async () => expect(await isAlive(grandchild)).toBe(false));
  });

  test('a backgrounded grandchild holding the pipes open does not keep the call waiting or survive it', async () => {
    const result = await runCommand(options('sleep 1000 & echo $!', { timeoutMs: 30_000 }));
    expect(result).toMatchObject({ exitCode: 0, timedOut: false });
    expect(result.durationMs).toBeLessThan(10_000);
    await vi.waitFor(async () => expect(await isAlive(Number(result.output.trim()))).toBe(false));
  });

  test('a backgrounded grandchild with its own output is killed when the command ends', async () => {
    const result = await runCommand(options('sleep 1000 >/dev/null 2>&1 & echo $!'));
    expect(result.exitCode).toBe(0);
    await vi.waitFor(async () => expect(await isAlive(Number(result.output.trim()))).toBe(false));
  });

  test('an abort signal kills the whole process tree', async () => {
    const controller = new AbortController();
    const pidFile = path.join(dir, 'pid');
    const running = runCommand(options(`sleep 1000 & echo $! > ${pidFile}; sleep 1000`, { signal: controller.signal }));
    const grandchild = await vi.waitFor(async () => {
      const text = await readFile(pidFile, 'utf8');
      expect(text).toMatch(/^\d+\n$/);
      return Number(text);
    });
    controller.abort();
    const result = await running;
    expect(result).toMatchObject({ exitCode: null, signal: 'SIGKILL', aborted: true, timedOut: false });
    await vi.waitFor(async () => expect(await isAlive(grandchild)).toBe(false));
  });

  test('an already aborted signal runs nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    const marker = path.join(dir, 'ran');
    const result = await runCommand(options(`touch ${marker}`, { signal: controller.signal }));
    expect(result).toMatchObject({ exitCode: null, aborted: true });
    await expect(readFile(marker)).rejects.toThrow();
  });
});
