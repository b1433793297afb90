import { EXIT, formatProblem } from '../../errors.js';
import { loadTickets } from '../../run/load-tickets.js';
import { isCi } from '../ci.js';
import type { CliIo } from '../io.js';

/** `corral check`: every problem of every ticket, nothing run. A missing API key is not a ticket problem. */
export async function checkCommand(inputs: string[], io: CliIo): Promise<number> {
  // Under CI, check what `corral run` there will demand: a sandbox, or one chosen on purpose.
  const loaded = await loadTickets(inputs, { env: io.env, cwd: process.cwd(), requireKey: false, requireSandbox: isCi(io.env) });
  for (const { shown, ticket, problems } of loaded) {
    if (problems.length === 0) {
      io.stdout.write(`ok  ${shown}  (${ticket?.id})\n`);
      continue;
    }
    io.stderr.write(`${shown}: ${problems.length} problem${problems.length === 1 ? '' : 's'}\n`);
    for (const problem of problems) io.stderr.write(`  ${formatProblem(problem)}\n`);
  }
  return loaded.some((l) => l.problems.length > 0) ? EXIT.usage : EXIT.passed;
}
