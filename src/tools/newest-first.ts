import { stat } from 'node:fs/promises';

/**
 * Sorts files by modification time, newest first (what was just worked on is usually
 * what matters), ties by path so the order is stable. A file that vanished sorts last.
 */
export async function sortNewestFirst(files: readonly string[]): Promise<string[]> {
  const dated = await Promise.all(
    files.map(async (file) => ({ file, mtimeMs: await stat(file).then((info) => info.mtimeMs, () => 0) })),
  );
  dated.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return dated.map((entry) => entry.file);
}
