import { EXIT, UsageError } from '../../errors.js';
import { findRepoRoot } from '../../git/git.js';
import { secretValues } from '../../text/redact.js';
import { clearRepoCache } from '../../workspace/repo-cache.js';
import { listCorralWorktrees, removeStaleWorktrees, type Cleaned } from '../../workspace/worktree.js';
import type { CliIo } from '../io.js';

export interface CleanOptions {
  force?: boolean;
  /** Also remove the repository's setup caches (package downloads, node_modules by lockfile). */
  caches?: boolean;
}

/**
 * `corral clean`: saves the patch of each worktree a killed run left in the repository
 * here, then removes it, and removes dead corral processes' temp dirs; live runs are left
 * alone. `--force` also takes what another host's corral locked (a CI container, a shared
 * checkout), after listing it.
 */
export async function cleanCommand(io: CliIo, options: CleanOptions = {}): Promise<number> {
  const repo = await findRepoRoot(process.cwd());
  if (repo === null) throw new UsageError(`${process.cwd()} is not in a git repository`);
  const secrets = secretValues(io.env);
  if (options.force) {
    const foreign = (await listCorralWorktrees(repo)).filter((worktree) => worktree.foreign);
    for (const worktree of foreign) io.stdout.write(`taking ${worktree.dir} (locked by pid ${worktree.pid} on host ${worktree.host || '?'}): its work is saved first\n`);
  }
  const cleaned = await removeStaleWorktrees(repo, { force: Boolean(options.force), secrets });
  for (const item of cleaned) io.stdout.write(`${describe(item)}\n`);
  const worktrees = cleaned.filter((item) => item.kind === 'worktree' && item.kept === undefined);
  const kept = cleaned.filter((item) => item.kept !== undefined);
  const left = await listCorralWorktrees(repo);
  const live = left.filter((worktree) => !worktree.stale && !worktree.foreign);
  const foreign = left.filter((worktree) => worktree.foreign);
  const parts = [`${worktrees.length} stale worktree${worktrees.length === 1 ? '' : 's'} removed`, `${live.length} of live runs left alone`];
  if (foreign.length > 0) parts.push(`${foreign.length} locked by another host left alone (corral clean --force takes them)`);
  if (kept.length > 0) parts.push(`${kept.length} kept because their work could not be saved`);
  io.stdout.write(`${parts.join('; ')}\n`);
  for (const worktree of foreign) io.stdout.write(`  ${worktree.dir} (pid ${worktree.pid} on host ${worktree.host || '?'})\n`);
  if (options.caches) {
    const cleared = await clearRepoCache(repo, io.env);
    io.stdout.write(cleared === null ? 'no cache folder (neither XDG_CACHE_HOME nor HOME is set)\n' : `removed the setup caches in ${cleared}\n`);
  }
  return kept.length > 0 ? EXIT.internal : EXIT.passed;
}

function describe(item: Cleaned): string {
  if (item.kept !== undefined) return `kept ${item.path}: ${item.kept}`;
  if (item.kind !== 'worktree') return `removed ${item.path}`;
  return `removed ${item.path}; ${item.patch ? `its work is in ${item.patch}` : 'it held no change'}`;
}
