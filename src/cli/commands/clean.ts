import { UsageError } from '../../errors.js';
import { findRepoRoot } from '../../git/git.js';
import { clearRepoCache } from '../../workspace/repo-cache.js';
import { listCorralWorktrees, removeStaleWorktrees } from '../../workspace/worktree.js';
import type { CliIo } from '../io.js';

/** `corral clean`: removes the worktrees (and directories) of killed runs of the repository here; live runs are left alone. */
export async function cleanCommand(io: CliIo, options: { caches?: boolean } = {}): Promise<number> {
  const repo = await findRepoRoot(process.cwd());
  if (repo === null) throw new UsageError(`${process.cwd()} is not in a git repository`);
  const removed = await removeStaleWorktrees(repo);
  for (const dir of removed) io.stdout.write(`removed ${dir}\n`);
  const live = (await listCorralWorktrees(repo)).filter((worktree) => !worktree.stale);
  io.stdout.write(`${removed.length} stale worktree${removed.length === 1 ? '' : 's'} removed; ${live.length} of live runs left alone\n`);
  if (options.caches) {
    const cleared = await clearRepoCache(repo, io.env);
    io.stdout.write(cleared === null ? 'no cache folder (neither XDG_CACHE_HOME nor HOME is set)\n' : `removed the setup caches in ${cleared}\n`);
  }
  return 0;
}
