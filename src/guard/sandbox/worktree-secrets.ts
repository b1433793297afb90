import { statSync } from 'node:fs';
import path from 'node:path';
import { UsageError } from '../../errors.js';
import { isSecret } from '../../policy/protected-paths.js';
import { dirEntries } from '../paths/dir-entries.js';

// The worktree's secret files (`.env`, keys, …, by the baseline's secret patterns), which
// the sandbox masks once the agent phase starts: setup is trusted and sees them, the
// agent's commands and the checks do not, unless the ticket exposes one by name.

/** Folders never walked: git's own, and installed packages (their test keys are no one's secret). */
const NOT_WALKED = new Set(['.git', 'node_modules']);

export interface WorktreeSecrets {
  /** Worktree-relative paths of the secret files to mask. */
  masked: string[];
  /** Worktree-relative paths of secret files left visible because `expose` names them. */
  exposed: string[];
}

/** Checks `expose` names worktree files by relative path, and returns them normalised. */
export function checkExposed(expose: string[]): string[] {
  return expose.map((name) => {
    const normal = path.posix.normalize(name.replace(/\\/g, '/')).replace(/\/$/, '');
    if (name === '' || path.isAbsolute(name) || normal === '.' || normal === '..' || normal.startsWith('../')) {
      throw new UsageError(`sandbox: expose: ${JSON.stringify(name)} is not a path inside the worktree (name a file relative to the repository root, such as .env.test)`);
    }
    return normal;
  });
}

/** The secret files in `worktree` now: files (or links to files) whose path matches a secret pattern. */
export function findWorktreeSecrets(worktree: string, expose: string[]): WorktreeSecrets {
  const exposedNames = new Set(checkExposed(expose));
  const masked: string[] = [];
  const exposed: string[] = [];
  const walk = (dir: string, relative: string): void => {
    for (const entry of dirEntries(dir)) {
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!NOT_WALKED.has(entry.name)) walk(full, rel);
        continue;
      }
      // Matched on the path inside the worktree, so a worktree that itself lies under a
      // folder such as `.aws` does not make every file a secret.
      if (!isSecret(`/${rel}`) || !isFileNow(full)) continue;
      (exposedNames.has(rel) ? exposed : masked).push(rel);
    }
  };
  walk(worktree, '');
  return { masked: masked.sort(), exposed: exposed.sort() };
}

function isFileNow(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
