import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { ToolContext } from '../../src/tools/types.js';

/** A fresh real directory; the returned function removes it. */
export async function makeTempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'corral-tools-')));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export function makeContext(worktree: string, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    worktree,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: worktree },
    signal: new AbortController().signal,
    outputCap: 30_000,
    bashTimeoutMs: 20_000,
    bashMaxTimeoutMs: 60_000,
    ...overrides,
  };
}

/** True while `pid` is a live process; a zombie waiting for its parent to reap it counts as dead. */
export async function isAlive(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const ps = await execa('ps', ['-o', 'stat=', '-p', String(pid)], { reject: false });
  const state = ps.stdout.trim();
  return state !== '' && !state.startsWith('Z');
}
