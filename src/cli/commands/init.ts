import path from 'node:path';
import { initProject } from '../../config/init.js';
import { UsageError } from '../../errors.js';
import { findRepoRoot } from '../../git/git.js';
import type { CliIo } from '../io.js';

/** `corral init`: a commented corral.yaml and an example ticket in the repository here. */
export async function initCommand(io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const repo = await findRepoRoot(cwd);
  if (repo === null) throw new UsageError(`${cwd} is not in a git repository; run \`git init\` first`);
  for (const file of await initProject(repo)) io.stdout.write(`wrote ${path.relative(cwd, file) || file}\n`);
  io.stdout.write('next: edit them, then `corral check tickets/` and `corral config`\n');
  return 0;
}
