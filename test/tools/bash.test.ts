import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { bashTool } from '../../src/tools/bash.js';
import { makeContext, makeTempDir } from './helpers.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

describe('Bash', () => {
  test('runs in the worktree with the given env', async () => {
    const ctx = makeContext(dir, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'hi' } });
    const out = await bashTool.execute({ command: 'pwd; echo $GREETING' }, ctx);
    expect(out).toMatchObject({ content: `${dir}\nhi`, isError: false });
  });

  test('a non-zero exit is an error that names the code', async () => {
    const out = await bashTool.execute({ command: 'echo broken >&2; exit 2' }, makeContext(dir));
    expect(out.isError).toBe(true);
    expect(out.content).toBe('broken\n\nexit code 2');
  });

  test('no output says so', async () => {
    expect(await bashTool.execute({ command: 'true' }, makeContext(dir))).toMatchObject({ content: '(no output)', isError: false });
  });

  test('the timeout is the input, capped at the maximum', async () => {
    const ctx = makeContext(dir, { bashTimeoutMs: 60_000, bashMaxTimeoutMs: 200 });
    const out = await bashTool.execute({ command: 'echo started; sleep 1000', timeout: 600_000 }, ctx);
    expect(out.isError).toBe(true);
    expect(out.content).toBe('started\n\nCommand timed out after 200ms and was killed.');
  });

  test('the default timeout applies without one in the input', async () => {
    const out = await bashTool.execute({ command: 'sleep 1000' }, makeContext(dir, { bashTimeoutMs: 300 }));
    expect(out).toMatchObject({ content: 'Command timed out after 300ms and was killed.', isError: true });
  });

  test('the run signal interrupts the command', async () => {
    const controller = new AbortController();
    const running = bashTool.execute({ command: 'sleep 1000' }, makeContext(dir, { signal: controller.signal }));
    controller.abort();
    expect(await running).toMatchObject({ content: 'Command was interrupted and killed.', isError: true });
  });

  test('output is capped', async () => {
    const out = await bashTool.execute({ command: "head -c 100000 /dev/zero | tr '\\0' x" }, makeContext(dir, { outputCap: 1000 }));
    expect(out.content).toContain('[... 99000 bytes cut ...]');
    expect(out.content.length).toBeLessThan(1100);
  });

  test('names no paths and is kind execute', () => {
    expect(bashTool.locations({ command: 'cat secret' }, '/w')).toEqual([]);
    expect(bashTool.kind).toBe('execute');
  });
});
