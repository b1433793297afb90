import path from 'node:path';
import { NEVER_PASSED } from '../ticket/schema.js';
import type { EnvChanges } from '../ticket/types.js';

// Tools, checks and setup commands get an environment built from nothing: a few
// variables a shell needs, the few a run without a person at a terminal needs, and what
// the config and the ticket say in `env` (which may change or unset any of corral's). A
// key, token, secret or password reaches a command only when `env` passes it by name,
// and corral's own model key never does.
const BASELINE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ'];

/**
 * What corral adds for a run nobody watches at a terminal (README, "The tools'
 * environment"): output is read by a model, not a terminal, and nothing may wait for a
 * person. `env` can change or unset each one (`env: {NO_COLOR: null}`).
 */
export const NON_INTERACTIVE: Readonly<Record<string, string>> = {
  TERM: 'dumb',
  NO_COLOR: '1',
  CI: 'true',
  PAGER: 'cat',
  GIT_TERMINAL_PROMPT: '0',
};

/**
 * Without the network, package managers are told so and fail at once, instead of each
 * waiting on DNS for about a minute. npm's setting also reaches pnpm, yarn 1 and npx.
 */
export const OFFLINE: Readonly<Record<string, string>> = {
  npm_config_offline: 'true',
  YARN_ENABLE_OFFLINE_MODE: '1',
  PIP_NO_INDEX: '1',
  UV_OFFLINE: '1',
  CARGO_NET_OFFLINE: 'true',
  GOPROXY: 'off',
};

/** Where setup's package managers keep their downloads, under the repository's cache folder. */
export function packageCacheEnv(cacheDir: string): Record<string, string> {
  return {
    npm_config_cache: path.join(cacheDir, 'npm'),
    YARN_CACHE_FOLDER: path.join(cacheDir, 'yarn'),
    YARN_GLOBAL_FOLDER: path.join(cacheDir, 'yarn-berry'),
    PIP_CACHE_DIR: path.join(cacheDir, 'pip'),
    // pnpm's metadata, uv, go's build cache and others that follow the XDG layout; pnpm's
    // store goes under XDG_DATA_HOME (npm warns of an unknown `npm_config_store_dir`).
    XDG_CACHE_HOME: path.join(cacheDir, 'xdg-cache'),
    XDG_DATA_HOME: path.join(cacheDir, 'xdg-data'),
  };
}

/**
 * Config every git a tool runs gets, sandboxed or not (git 2.31 and later read it from
 * the environment): a bare repository planted in the worktree is never found by walking
 * up from a folder in it (its config could name a program to run), and no fsmonitor runs.
 * A protection, not a default: appended after any `GIT_CONFIG_*` `env` gives, never removed.
 */
export const TOOL_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
];

export interface ToolEnvOptions {
  /** The run's private temp dir, the commands' TMPDIR. */
  tmpDir: string;
  /** The commands have no network: package managers are told they are offline. */
  offline?: boolean;
  /** Setup's package cache folder: npm, pnpm, yarn and pip are pointed into it. */
  packageCache?: string;
}

export function buildToolEnv(host: NodeJS.ProcessEnv, changes: EnvChanges, options: ToolEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASELINE) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.TMPDIR = options.tmpDir;
  Object.assign(env, NON_INTERACTIVE);
  if (options.offline) Object.assign(env, OFFLINE);
  if (options.packageCache !== undefined) Object.assign(env, packageCacheEnv(options.packageCache));
  for (const [name, change] of Object.entries(changes)) {
    if (change === null || (change === true && (NEVER_PASSED.includes(name) || host[name] === undefined))) delete env[name];
    else env[name] = change === true ? host[name]! : change;
  }
  // After any `env` gives, so ours come last and win.
  const given = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  const first = Number.isSafeInteger(given) && given > 0 ? given : 0;
  TOOL_GIT_CONFIG.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${first + index}`] = key;
    env[`GIT_CONFIG_VALUE_${first + index}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(first + TOOL_GIT_CONFIG.length);
  return env;
}
