import path from 'node:path';
import { UsageError, type Problem } from '../errors.js';
import { discoverTickets } from '../ticket/discover.js';
import { findDuplicateIds } from '../ticket/duplicate-ids.js';
import { loadTicket } from '../ticket/load.js';
import type { Ticket } from '../ticket/types.js';
import { preflightTicket, type PreflightOptions } from './preflight.js';

export interface LoadedTicket {
  /** The path as shown to the user (relative to cwd). */
  shown: string;
  ticket?: Ticket;
  problems: Problem[];
}

/**
 * Finds, loads and preflights every ticket of a command line, collecting every problem
 * of every file (duplicate ids across files included) instead of stopping at the first.
 */
export async function loadTickets(inputs: string[], options: PreflightOptions): Promise<LoadedTicket[]> {
  const files = await discoverTickets(inputs.map((p) => path.resolve(options.cwd, p)));
  if (files.length === 0) throw new UsageError(`no ticket files found in ${inputs.join(', ')}`);
  const loaded: LoadedTicket[] = [];
  for (const file of files) {
    const shown = path.relative(options.cwd, file) || file;
    try {
      const ticket = await loadTicket(shown);
      loaded.push({ shown, ticket, problems: await preflightTicket(ticket, options) });
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      // A problem with no position is still a problem of this file.
      const problems = error.problems.length > 0 ? error.problems : [{ file: shown, line: 1, column: 1, field: '', message: error.message }];
      loaded.push({ shown, problems });
    }
  }
  const tickets = loaded.flatMap((l) => (l.ticket ? [l.ticket] : []));
  for (const duplicate of findDuplicateIds(tickets, options.cwd)) {
    loaded.find((l) => l.shown === duplicate.file)?.problems.push(duplicate);
  }
  return loaded;
}
