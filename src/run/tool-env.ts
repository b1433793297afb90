// Tools, checks and setup commands get an environment built from nothing: a few
// variables a shell needs, plus the ones the ticket names. A key, token, secret or
// password reaches a tool only when the ticket passes it by name.
const BASELINE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ'];

/**
 * Config every git a tool runs gets, sandboxed or not (git 2.31 and later read it from
 * the environment): a bare repository planted in the worktree is never found by walking
 * up from a folder in it (its config could name a program to run), and no fsmonitor runs.
 */
export const TOOL_GIT_CONFIG: ReadonlyArray<readonly [string, string]> = [
  ['safe.bareRepository', 'explicit'],
  ['core.fsmonitor', 'false'],
];

/** `settingsEnv`: values config sets (Claude Code's `env`), over the host's; corral's own fixed ones still win. */
export function buildToolEnv(host: NodeJS.ProcessEnv, passThrough: string[], tmpDir: string, settingsEnv: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASELINE) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of passThrough) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, settingsEnv);
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.TMPDIR = tmpDir;
  env.TERM = 'dumb';
  env.NO_COLOR = '1';
  env.CI = 'true';
  env.GIT_TERMINAL_PROMPT = '0';
  env.PAGER = 'cat';
  // After any the ticket passes, so ours come last and win.
  const given = Number.parseInt(env.GIT_CONFIG_COUNT ?? '0', 10);
  const first = Number.isSafeInteger(given) && given > 0 ? given : 0;
  TOOL_GIT_CONFIG.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${first + index}`] = key;
    env[`GIT_CONFIG_VALUE_${first + index}`] = value;
  });
  env.GIT_CONFIG_COUNT = String(first + TOOL_GIT_CONFIG.length);
  return env;
}
