import { UsageError } from '../../errors.js';
import { findRepoRoot } from '../../git/git.js';
import { listCorralWorktrees, removeStaleWorktrees } from '../../workspace/worktree.js';
import type { CliIo } from '../io.js';

/** `corral clean`: removes the worktrees (and directories) of killed runs of the repository here; live runs are left alone. */
export async function cleanCommand(io: CliIo): Promise<number> {
  const repo = await findRepoRoot(process.cwd());
  if (repo === null) throw new UsageError(`${process.cwd()} is not in a git repository`);
  const removed = await removeStaleWorktrees(repo);
  for (const dir of removed) io.stdout.write(`removed ${dir}\n`);
  const live = (await listCorralWorktrees(repo)).filter((worktree) => !worktree.stale);
  io.stdout.write(`${removed.length} stale worktree${removed.length === 1 ? '' : 's'} removed; ${live.length} of live runs left alone\n`);
  return 0;
}
