import * as fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { settingsFrom } from '../../src/config/settings.js';
import { runTicket } from '../../src/run/run-ticket.js';
import { loadTicket } from '../../src/ticket/load.js';
import { parseTrace } from '../../src/trace/read.js';
import type { TraceFileSystem } from '../../src/trace/write.js';
import { NO_USER_CONFIG } from '../support/cli.js';
import { extraWorktrees, gitIn, repoWithFiles, tempDir } from '../support/repo.js';
import { enospc, traceFileSystemWith } from '../support/full-disk.js';

// A disk that fills up under a real run (replay model, real worktree and setup), injected
// at the trace writer so that it is tested on every machine; test/e2e/disk-full.test.ts does
// the same with a real full tmpfs where the machine allows one.

const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/nonexistent', XDG_CONFIG_HOME: NO_USER_CONFIG };

/** Node's file system until `lines` trace lines are written (or a line of type `atType` comes); then every write fails with ENOSPC after taking a few bytes. */
function fullAfterLines(lines: number, atType?: string): TraceFileSystem {
  let left = lines;
  return traceFileSystemWith((fd, bytes, offset) => {
    if (atType !== undefined && bytes.includes(`"type":"${atType}"`)) left = 0;
    if (left > 0) {
      left -= 1;
      return fs.writeSync(fd, bytes, offset);
    }
    if (offset === 0) return fs.writeSync(fd, bytes, 0, 10);
    throw enospc();
  });
}

const kept: { repo: string; dir: string }[] = [];
afterAll(() => {
  for (const { repo, dir } of kept) gitIn(repo, ['worktree', 'remove', '--force', '--force', dir]);
});

async function runWithFullDisk(lines: number, atType?: string) {
  const repo = repoWithFiles(
    {
      'src/a.txt': 'a\n',
      'replay.yaml': 'turns:\n  - tools:\n      - Write: {file_path: src/a.txt, content: "work\\n"}\n  - text: done\n',
      't.yaml': 'task: t\nallow: ["src/**"]\nsandbox: none\nsetup: ["echo set up"]\nmodel: replay:replay.yaml\n',
    },
    'corral-trace-full-',
  );
  const result = await runTicket(await loadTicket(path.join(repo, 't.yaml')), {
    keep: false,
    interrupt: new AbortController().signal,
    env,
    cwd: repo,
    settings: settingsFrom(await loadConfig(repo, env, repo)),
    runsDir: tempDir('corral-runs-'),
    traceFileSystem: fullAfterLines(lines, atType),
  });
  if (result.worktree) kept.push({ repo, dir: result.worktree });
  return { repo, result };
}

describe('a run whose trace cannot be written', () => {
  it('stops at once, keeps its worktree and says where, exit 70, the trace whole lines only', async () => {
    // Four lines are written (run_start, then the worktree, the instructions, the sandbox, in whatever order they come); the next finds the disk full.
    const { repo, result } = await runWithFullDisk(4);
    expect(result.status).toBe('internal_error');
    expect(result.exitCode).toBe(70);
    expect(result.reason).toBe(`cannot write the trace ${result.trace}: no space left on the device (ENOSPC); the run was stopped; the worktree is kept at ${result.worktree}`);
    expect(result.steps).toBe(0);
    expect(result.toolCalls).toBe(0);
    expect(extraWorktrees(repo)).toEqual([result.worktree]);
    expect(fs.existsSync(result.worktree!)).toBe(true);
    const text = fs.readFileSync(result.trace, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const types = parseTrace(text, result.trace, { mode: 'strict' }).events.map((event) => event.type);
    expect(types).toHaveLength(4);
    expect(types[0]).toBe('run_start');
    expect(types).toContain('worktree');
    expect(types).not.toContain('model_response');
  });

  it('when the first line cannot be written, makes no worktree at all', async () => {
    const { repo, result } = await runWithFullDisk(0);
    expect(result.exitCode).toBe(70);
    expect(result.reason).toMatch(/^cannot write the trace .*: no space left on the device \(ENOSPC\); the run was stopped; nothing was run$/);
    expect(result.worktree).toBeUndefined();
    expect(extraWorktrees(repo)).toEqual([]);
    expect(fs.readFileSync(result.trace, 'utf8')).toBe('');
  });

  it('a run that passed but could not write its last lines: exit 70, saying where its work went', async () => {
    const { result } = await runWithFullDisk(Number.POSITIVE_INFINITY, 'kept');
    expect(result.exitCode).toBe(70);
    expect(result.branch).toMatch(/^corral\/t/);
    expect(result.reason).toBe(`cannot write the trace ${result.trace}: no space left on the device (ENOSPC); the work was committed to ${result.branch}`);
    const text = fs.readFileSync(result.trace, 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    expect(text).not.toContain('"type":"kept"');
  });
});
