import { fork, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';

// The CLI closes what it inherited before it starts anything (bin/corral.cjs), so nothing
// it runs gets a descriptor of whoever started it; Node's own descriptors, and a Node
// parent's IPC channel, must survive that. test/e2e/inherited-fds.test.ts runs the CLI.

describe.runIf(process.platform === 'linux')('closing the descriptors corral inherited', () => {
  it('closes what the parent passed beyond stdin, stdout and stderr, and keeps the IPC channel working', async () => {
    // fd 3: the IPC channel; 200 and 201: pipes the parent leaves open in the child.
    const stdio: StdioOptions = ['ignore', 'ignore', 'inherit', 'ipc', ...Array<'ignore'>(196).fill('ignore'), 'pipe', 'pipe'];
    const child = fork(path.join(PROJECT_ROOT, 'test/fixtures/close-inherited.cjs'), { stdio });
    const [said] = (await once(child, 'message')) as [{ closed: number[]; left: number[]; channel: number }];
    expect(said.channel).toBe(3);
    // And whatever this process was given that it passed on (a CI runner's, a terminal's).
    expect(said.closed).toEqual(expect.arrayContaining([200, 201]));
    expect(said.left).toEqual(expect.arrayContaining([0, 1, 2, 3]));
    expect(said.left).not.toContain(200);
    expect(said.left).not.toContain(201);
    // Node's own (its event loop's) were not touched: the child went on and answered.
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(0);
  });
});
