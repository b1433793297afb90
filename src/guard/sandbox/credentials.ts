import path from 'node:path';

/**
 * Places in a home directory that hold credentials: agents' and tools' logins, keys,
 * cloud and registry tokens. A folder the config asks the sandbox to show (`sandbox.read`)
 * may neither be one of them, lie inside one, nor hold one.
 */
export const CREDENTIALS_IN_HOME = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.config/gcloud',
  '.kube',
  '.docker',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.git-credentials',
  '.gitconfig',
  '.config/git',
  '.config/gh',
  '.config/hub',
  '.config/glab-cli',
  '.claude',
  '.claude.json',
  '.codex',
  '.config/anthropic',
  '.config/openai',
  '.m2',
  '.gradle/gradle.properties',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.terraform.d',
  '.terraformrc',
  '.vault-token',
  '.password-store',
  '.local/share/keyrings',
  '.mozilla',
  '.config/google-chrome',
  '.config/chromium',
  '.bash_history',
  '.zsh_history',
  '.python_history',
  '.node_repl_history',
  '.psql_history',
  '.mysql_history',
  '.lesshst',
  '.viminfo',
];

/** Why a folder may not be shown read-only in the sandbox, or null when it may. `home` is the real home. */
export function readableFolderProblem(folder: string, home: string): string | null {
  if (!path.isAbsolute(folder)) return 'give an absolute path or one under `~/`';
  const normal = path.resolve(folder);
  if (normal === '/' || normal === home) return `${folder} is the ${normal === '/' ? 'root' : 'home directory'}, which holds credentials`;
  for (const name of CREDENTIALS_IN_HOME) {
    const place = path.join(home, name);
    if (normal === place || normal.startsWith(`${place}/`)) return `${folder} is (or lies in) ${path.join('~', name)}, which holds credentials`;
    if (place.startsWith(`${normal}/`)) return `${folder} holds ${path.join('~', name)}, which holds credentials`;
  }
  return null;
}

/** `~/x` as a path under `home`; anything else as written. */
export function expandHome(folder: string, home: string): string {
  if (folder === '~') return home;
  return folder.startsWith('~/') ? path.join(home, folder.slice(2)) : folder;
}
