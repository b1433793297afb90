import path from 'node:path';
import { EXIT, formatProblem, UsageError } from '../../errors.js';
import { discoverTickets } from '../../ticket/discover.js';
import { checkReplayScript } from '../../agent/create-model.js';
import { loadTicket } from '../../ticket/load.js';
import type { CliIo } from '../io.js';

/** `corral check`: every problem of every ticket, nothing run. */
export async function checkCommand(inputs: string[], io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const files = await discoverTickets(inputs.map((p) => path.resolve(cwd, p)));
  let bad = 0;
  for (const file of files) {
    const shown = path.relative(cwd, file) || file;
    try {
      const ticket = await loadTicket(shown);
      await checkReplayScript(ticket.model, cwd);
      io.stdout.write(`ok  ${shown}  (${ticket.id})\n`);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      bad += 1;
      io.stderr.write(`${error.message}\n`);
      for (const problem of error.problems) io.stderr.write(`  ${formatProblem(problem)}\n`);
    }
  }
  if (files.length === 0) throw new UsageError(`no ticket files found in ${inputs.join(', ')}`);
  return bad > 0 ? EXIT.usage : EXIT.passed;
}
