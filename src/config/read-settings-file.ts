import { readFile } from 'node:fs/promises';

/**
 * A settings file's text without its byte-order mark; `absent` when there is no such
 * file (absent is fine for every scope), or why it could not be read.
 */
export async function readSettingsFile(file: string): Promise<{ text: string } | { absent: true } | { unreadable: string }> {
  try {
    return { text: (await readFile(file, 'utf8')).replace(/^\uFEFF/, '') };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { absent: true };
    return { unreadable: code ?? String(error) };
  }
}
