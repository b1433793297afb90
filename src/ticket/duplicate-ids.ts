import path from 'node:path';
import type { Problem } from '../errors.js';
import type { Ticket } from './types.js';

/**
 * Two tickets of one run with the same id would share a branch (`corral/<id>`) and a
 * run-id prefix, so the second would silently replace the first's result.
 */
export function findDuplicateIds(tickets: Ticket[], cwd: string): Problem[] {
  const firstFile = new Map<string, string>();
  const problems: Problem[] = [];
  for (const ticket of tickets) {
    const shown = path.relative(cwd, ticket.file) || ticket.file;
    const earlier = firstFile.get(ticket.id);
    if (earlier === undefined) firstFile.set(ticket.id, shown);
    else problems.push({ file: shown, line: 1, column: 1, field: 'id', message: `id "${ticket.id}" is also the id of ${earlier}`, hint: 'give one of them its own `id:`' });
  }
  return problems;
}
