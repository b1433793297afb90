import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runProgram } from '../../proc/run-program.js';
import { formatGitConfig, parseGitConfigList, type GitConfigEntry } from './git-config.js';

// The HOME commands see inside the sandbox: an empty folder of the run's, read-only, in
// place of the real one. It holds one file, a `.gitconfig` with the user's name and email
// only, so the agent's `git commit` works and nothing else of the user's config (helpers,
// tokens, include paths, aliases that run programs) comes in.

/** Used when the user's git config names no one, as the harness's own commits do. */
const FALLBACK_IDENTITY: GitConfigEntry[] = [
  { key: 'user.name', value: 'corral' },
  { key: 'user.email', value: 'corral@localhost' },
];

/** Makes the private home `dir` (which must not exist), with the identity of `userHome`'s git config. */
export async function makePrivateHome(dir: string, userHome: string | undefined, searchPath: string): Promise<void> {
  mkdirSync(dir, { mode: 0o700 });
  const identity = userHome === undefined ? [] : await gitIdentity(userHome, searchPath);
  const named = new Set(identity.map((entry) => entry.key));
  const entries = [...identity, ...FALLBACK_IDENTITY.filter((entry) => !named.has(entry.key))];
  writeFileSync(path.join(dir, '.gitconfig'), formatGitConfig(entries));
}

/** `user.name` and `user.email` of the user's global git config (includes not followed: reading runs nothing). */
async function gitIdentity(userHome: string, searchPath: string): Promise<GitConfigEntry[]> {
  const result = await runProgram('git', ['config', '--global', '--no-includes', '-z', '--get-regexp', '^user\\.(name|email)$'], {
    cwd: '/',
    env: { PATH: searchPath, HOME: userHome, GIT_CONFIG_NOSYSTEM: '1' },
    timeoutMs: 10_000,
  });
  if (result.exitCode !== 0) return [];
  // --get-regexp -z prints `key\nvalue\0`, the same records as --list -z; the last one wins, as in git.
  const latest = new Map<string, GitConfigEntry>();
  for (const entry of parseGitConfigList(result.stdout.toString('utf8'))) {
    if ((entry.key === 'user.name' || entry.key === 'user.email') && entry.value !== null && entry.value.trim() !== '') latest.set(entry.key, entry);
  }
  return [...latest.values()];
}
