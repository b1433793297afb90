import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { readGlobalIdentity } from '../../git/git.js';
import { formatGitConfig, type GitConfigEntry } from './git-config.js';

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

/** `user.name` and `user.email` of the user's global git config, as git config entries. */
async function gitIdentity(userHome: string, searchPath: string): Promise<GitConfigEntry[]> {
  const { name, email } = await readGlobalIdentity(userHome, searchPath);
  return [...(name === undefined ? [] : [{ key: 'user.name', value: name }]), ...(email === undefined ? [] : [{ key: 'user.email', value: email }])];
}
