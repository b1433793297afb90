import path from 'node:path';
import { effectiveConfig, formatEffectiveConfig } from '../../config/describe.js';
import { loadConfig } from '../../config/load.js';
import { settingsFrom } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { loadTicket } from '../../ticket/load.js';
import { findRepoRoot } from '../../git/git.js';
import type { CliIo } from '../io.js';
import type { ConfigOptions } from '../main.js';

/** `corral config`: the effective config of the repository here (or of a ticket), each value with where it came from. */
export async function configCommand(options: ConfigOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const ticket = options.ticket === undefined ? undefined : await loadTicket(options.ticket);
  const repo = ticket?.repo ?? (await findRepoRoot(cwd));
  const loaded = await loadConfig(repo, io.env, cwd);
  if (loaded.problems.length > 0) throw new UsageError(`${loaded.problems.length} problem(s) in the config`, loaded.problems);
  const config = effectiveConfig(settingsFrom(loaded), ticket, ticket ? path.relative(cwd, ticket.file) || ticket.file : undefined);
  io.stdout.write(options.json ? `${JSON.stringify(config, null, 2)}\n` : formatEffectiveConfig(config));
  return 0;
}
