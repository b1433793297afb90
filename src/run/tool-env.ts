// Tools, checks and setup commands get an environment built from nothing: a few
// variables a shell needs, plus the ones the ticket names. A key, token, secret or
// password reaches a tool only when the ticket passes it by name.
const BASELINE = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ'];

export function buildToolEnv(host: NodeJS.ProcessEnv, passThrough: string[], tmpDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of BASELINE) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  for (const name of passThrough) {
    const value = host[name];
    if (value !== undefined) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  env.TMPDIR = tmpDir;
  env.TERM = 'dumb';
  env.NO_COLOR = '1';
  env.CI = 'true';
  env.GIT_TERMINAL_PROMPT = '0';
  env.PAGER = 'cat';
  return env;
}
