import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, realpath, rename, stat, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

// Reading and replacing an agent's settings file: whole or not at all. The new text goes
// to a temp file beside the old one, then takes its name in one rename, so a crash or a
// full disk leaves the old file as it was, never half of the new one.

/** The file's text, or null when there is none. */
export async function readTextFile(file: string): Promise<string | null> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Replaces `file` with `text` atomically, keeping its mode. A symlink (settings kept in a
 * dotfiles repository) stays a link: its target is what is replaced. The folders are made
 * when missing; returns whether the file is new.
 */
export async function writeTextFileAtomically(file: string, text: string): Promise<{ created: boolean }> {
  let target = file;
  let mode: number | undefined;
  try {
    if ((await lstat(file)).isSymbolicLink()) target = await realpath(file);
    mode = (await stat(target)).mode & 0o7777;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(path.dirname(target), { recursive: true });
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.corral-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeFile(temp, text, { flag: 'wx', mode: mode ?? 0o644 });
    // The umask may have narrowed what writeFile set; the old file's mode is kept exactly.
    if (mode !== undefined) await chmod(temp, mode);
    await rename(temp, target);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  return { created: mode === undefined };
}
