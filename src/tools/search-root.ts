import { stat } from 'node:fs/promises';
import { fileErrorOutput } from './file-errors.js';
import type { ToolOutput } from './types.js';

/** What a search's `path` names: a directory to walk, a single file, or an error for the model. */
export type SearchRoot = { kind: 'directory' | 'file'; path: string } | { kind: 'error'; output: ToolOutput };

export async function statSearchRoot(absolute: string, shown: string): Promise<SearchRoot> {
  try {
    const info = await stat(absolute);
    return { kind: info.isDirectory() ? 'directory' : 'file', path: absolute };
  } catch (error) {
    const output = fileErrorOutput(error, shown);
    if (!output) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { kind: 'error', output: { content: `Path does not exist: ${shown}`, isError: true } };
    }
    return { kind: 'error', output };
  }
}

/** How a search root reads in a sentence. */
export function searchRootLabel(shown: string): string {
  return shown === '.' ? 'the repository root' : shown;
}
