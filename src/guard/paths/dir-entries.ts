import { readdirSync, type Dirent } from 'node:fs';

/** The entries of a directory, or none where it cannot be read (gone, not a directory, no permission): every walk of the guard and the sandbox skips those alike. */
export function dirEntries(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}
