import { fork, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../support/cli.js';
import { tempDir } from '../support/repo.js';

// The CLI closes what it inherited before it starts anything (bin/corral.cjs), so nothing
// it runs gets a descriptor of whoever started it; Node's own descriptors, and a Node
// parent's IPC channel, must survive that. test/e2e/inherited-fds.test.ts runs the CLI.

interface Said {
  closed: number[];
  left: number[];
  channel: number;
  loopsBefore: number[];
  loopsAfter: number[];
}

/**
 * The fixture forked with the IPC channel on 3 and pipes its parent leaves open on 200 and
 * 201. It runs in a temp folder, where V8's log goes under a profiling flag, and the
 * symbol map such a flag writes (always /tmp/perf-<pid>.map) is removed after it.
 */
async function closeInChild(execArgv: string[] = []): Promise<Said> {
  const stdio: StdioOptions = ['ignore', 'ignore', 'inherit', 'ipc', ...Array<'ignore'>(196).fill('ignore'), 'pipe', 'pipe'];
  const child = fork(path.join(PROJECT_ROOT, 'test/fixtures/close-inherited.cjs'), { stdio, execArgv, cwd: tempDir('corral-fds-') });
  try {
    const [said] = (await once(child, 'message')) as [Said];
    const [code] = (await once(child, 'exit')) as [number];
    expect(code).toBe(0);
    return said;
  } finally {
    rmSync(`/tmp/perf-${child.pid}.map`, { force: true });
  }
}

describe.runIf(process.platform === 'linux')('closing the descriptors corral inherited', () => {
  it("closes what the parent passed beyond stdin, stdout and stderr, and keeps the IPC channel and the event loop's own", async () => {
    const said = await closeInChild();
    expect(said.channel).toBe(3);
    // And whatever this process was given that it passed on (a CI runner's, a terminal's).
    expect(said.closed).toEqual(expect.arrayContaining([200, 201]));
    expect(said.left).toEqual(expect.arrayContaining([0, 1, 2, 3]));
    expect(said.left).not.toContain(200);
    expect(said.left).not.toContain(201);
    expect(said.loopsBefore.length).toBeGreaterThan(0);
    expect(said.loopsAfter).toEqual(said.loopsBefore);
  });

  it('closes nothing while V8 writes logs of its own, which it opens without close-on-exec', async () => {
    const said = await closeInChild(['--perf-basic-prof']);
    expect(said.closed).toEqual([]);
    expect(said.left).toEqual(expect.arrayContaining([200, 201]));
  });
});
