import { execa } from 'execa';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(PROJECT_ROOT, 'bin', 'corral.cjs');
/** A config home that does not exist, so no user config is found unless a test writes one. */
export const NO_USER_CONFIG = path.join(os.tmpdir(), 'corral-tests-no-user-config');
/** Where runs of the tests keep setup's caches, so that they never fill the machine's ~/.cache. */
export const TEST_CACHE_HOME = path.join(os.tmpdir(), 'corral-tests-cache');

export interface CliRun {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs the real, built CLI as a child process, with an environment of the test's choosing.
 * `bin` is an executable to run in place of this checkout's entry: an installed package's
 * `node_modules/.bin/corral`, which must then work by its own shebang. `node` is the Node
 * to run this checkout's entry with (the one on PATH unless given), `nodeArgs` its options.
 */
export async function runCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; timeoutMs?: number; bin?: string; node?: string; nodeArgs?: string[] },
): Promise<CliRun> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'LANG', 'TMPDIR']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  // Hermetic: the machine's own ~/.config/corral/config.yaml never reaches a test.
  env.XDG_CONFIG_HOME = NO_USER_CONFIG;
  // Nor the machine's own ~/.claude/settings.json (a test of the user scope unsets this).
  env.CLAUDE_CONFIG_DIR = NO_USER_CONFIG;
  env.XDG_CACHE_HOME = TEST_CACHE_HOME;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const [file, argv] = options.bin === undefined ? [options.node ?? 'node', [...(options.nodeArgs ?? []), BIN, ...args]] : [options.bin, args];
  const result = await execa(file, argv, {
    cwd: options.cwd,
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: options.timeoutMs ?? 120_000,
  });
  return { exitCode: result.exitCode ?? -1, stdout: String(result.stdout), stderr: String(result.stderr) };
}

/** The lines of `corral run --json`: one object per ticket, then the totals (checked to be last and alone). */
export function jsonLines(stdout: string): { tickets: any[]; totals: any } {
  const objects = String(stdout).trim().split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
  const totals = objects.at(-1);
  if (totals?.type !== 'totals' || objects.slice(0, -1).some((o) => o.type === 'totals')) throw new Error(`expected JSON lines ending in one totals object, got:\n${stdout}`);
  return { tickets: objects.slice(0, -1), totals };
}

/** The report of the one ticket a `corral run --json` ran. */
export function runReport(stdout: string): any {
  const { tickets } = jsonLines(stdout);
  if (tickets.length !== 1) throw new Error(`expected one ticket's report, got ${tickets.length}:\n${stdout}`);
  return tickets[0];
}
