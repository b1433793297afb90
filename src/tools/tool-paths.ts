import path from 'node:path';

// How tools turn the paths a model names into files, and files back into names the
// model can reuse. Whether a path is allowed at all is the guard's business, not ours.

/** A relative path names a file under the worktree root; an absolute path is taken as is. */
export function resolveToolPath(given: string, worktree: string): string {
  return path.isAbsolute(given) ? path.normalize(given) : path.resolve(worktree, given);
}

/** Relative to the worktree when inside it (what the model passes back), absolute otherwise. */
export function displayPath(absolute: string, worktree: string): string {
  const relative = path.relative(worktree, absolute);
  if (relative === '') return '.';
  if (relative.startsWith('..') || path.isAbsolute(relative)) return absolute;
  return relative.split(path.sep).join('/');
}
