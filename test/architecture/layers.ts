import { readdirSync } from 'node:fs';
import path from 'node:path';

// corral's layers, top to bottom. A module (a folder of src/, or a file directly in it)
// may import only modules of lower layers: never up, never sideways, so no two modules
// import each other and a change low down can be reviewed without reading what sits on
// top. DESIGN.md ("Layout") draws the same picture.
export const LAYERS: readonly (readonly string[])[] = [
  ['cli'],
  ['run', 'batch'],
  ['agent', 'agents', 'guard', 'tools', 'report', 'workspace'],
  ['config'],
  ['ticket'],
  ['policy'],
  ['trace'],
  ['git'],
  ['proc'],
  ['text'],
  ['errors', 'package'],
];

// The guard decides from plain facts: whatever a ticket or config says reaches it through
// its own small types (GuardTicket, the policy blocks), never through their loaders.
export const NEVER: Record<string, readonly string[]> = {
  guard: ['config', 'ticket'],
};

export const SRC = path.resolve(import.meta.dirname, '../../src');

/** Every .ts file under `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}
