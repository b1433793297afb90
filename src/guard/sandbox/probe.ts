import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findExecutable } from '../../proc/find-executable.js';
import { scratchTempPrefix } from '../../proc/owner.js';
import { runProgram } from '../../proc/run-program.js';
import { bwrapArgv } from './bwrap-argv.js';

/** Whether bubblewrap works here, and how to call it. */
/** `asPid1`: this bwrap can run a program as its namespace's init (`--as-pid-1`), which the run's supervisor needs. */
export type BubblewrapProbe = { ok: true; bwrap: string; disableUserns: boolean; asPid1: boolean } | { ok: false; reason: string };

export interface ProbeOptions {
  /** Where to look for `bwrap`, as in PATH; default corral's own PATH. */
  searchPath?: string;
}

const PROBE_TIMEOUT_MS = 10_000;

// Whether bubblewrap works is a fact about the machine, the same for every run of this
// process, so it is found once and shared on purpose (a Map keyed by the executable, so a
// different bwrap is probed afresh). Nothing about a run is kept here.
const probes = new Map<string, Promise<BubblewrapProbe>>();

/**
 * Runs `true` in a sandbox with every namespace, mount and flag a command gets, once per
 * bwrap executable per process. Never throws: a failure is a reason, for the user.
 */
export function probeBubblewrap(options: ProbeOptions = {}): Promise<BubblewrapProbe> {
  const bwrap = findExecutable('bwrap', options.searchPath ?? process.env.PATH ?? '');
  if (bwrap === undefined) return Promise.resolve({ ok: false, reason: 'bwrap was not found on PATH (install the bubblewrap package)' });
  let probe = probes.get(bwrap);
  if (probe === undefined) {
    probe = runProbe(bwrap);
    probes.set(bwrap, probe);
  }
  return probe;
}

async function runProbe(bwrap: string): Promise<BubblewrapProbe> {
  const help = await runProgram(bwrap, ['--help'], { timeoutMs: PROBE_TIMEOUT_MS });
  const helpText = `${help.stdout.toString('utf8')}\n${help.stderr.toString('utf8')}`;
  const disableUserns = helpText.includes('--disable-userns');
  const asPid1 = helpText.includes('--as-pid-1');
  // Named after this process, so the next run or `corral clean` removes it if a kill leaves it.
  const scratch = realpathSync(mkdtempSync(path.join(tmpdir(), scratchTempPrefix('probe'))));
  try {
    const worktree = path.join(scratch, 'worktree');
    const tmpDir = path.join(scratch, 'tmp');
    for (const dir of [worktree, tmpDir]) mkdirSync(dir);
    const layout = { bwrap, worktree, tmpDir, covers: [], readViews: [], readOnly: [], writable: [], hiddenDirs: [], hiddenFiles: [], network: false, disableUserns };
    const [file, ...args] = bwrapArgv(layout, ['true'], worktree);
    const result = await runProgram(file!, args, { timeoutMs: PROBE_TIMEOUT_MS, env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    if (result.exitCode === 0) return { ok: true, bwrap, disableUserns, asPid1 };
    const said = result.stderr.toString('utf8').trim().split('\n').filter((line) => line.trim() !== '').pop();
    const how = result.timedOut ? `timed out after ${PROBE_TIMEOUT_MS / 1000}s` : (said ?? result.error ?? `exit ${result.exitCode ?? result.signal}`);
    return { ok: false, reason: `${bwrap} could not make a sandbox: ${how}` };
  } catch (error) {
    return { ok: false, reason: `${bwrap} could not be run: ${error instanceof Error ? error.message : String(error)}` };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

