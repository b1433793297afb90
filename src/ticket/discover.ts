import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';

const SKIPPED_DIRS = new Set(['node_modules']);

/** tinyglobby, loaded only for a path that does not exist (a glob, or a typo): its start-up is a few ms of every run's. */
const loadGlobber = () => import('tinyglobby');

/**
 * The ticket files named by `paths`: a file is taken as is (the loader judges its
 * extension); a directory is searched recursively for `.yaml`/`.yml` files and for
 * `.md` files that start with front matter, so READMEs next to tickets are skipped; a
 * glob (quoted, so the shell left it alone) is expanded to the ticket files it matches.
 * Returns each file once, as spelled by the caller, sorted by path.
 */
export async function discoverTickets(paths: string[]): Promise<string[]> {
  const found: (string[] | null)[] = await Promise.all(
    paths.map(async (given) => {
      const stats = await stat(given).catch(() => null);
      if (!stats) return (await loadGlobber()).isDynamicPattern(given) ? ticketsMatching(given) : null;
      return stats.isDirectory() ? findTicketsIn(path.normalize(given)) : [path.normalize(given)];
    }),
  );
  // Named in the order given, whichever stat answered first.
  const missing = paths.filter((_, i) => found[i] === null);
  if (missing.length > 0) {
    const { isDynamicPattern } = await loadGlobber();
    throw new UsageError(`no such file or directory: ${missing.map((p) => (isDynamicPattern(p) ? `${p} (a glob that matches no ticket file)` : p)).join(', ')}`);
  }
  const byAbsolute = new Map<string, string>();
  for (const file of found.flatMap((f) => f ?? [])) {
    const key = path.resolve(file);
    if (!byAbsolute.has(key)) byAbsolute.set(key, file);
  }
  return [...byAbsolute.values()].sort(comparePaths);
}

/** The ticket files a glob matches; null (reported as missing) when it matches none. */
async function ticketsMatching(pattern: string): Promise<string[] | null> {
  const { glob } = await loadGlobber();
  const matches = await glob(pattern, { absolute: true, onlyFiles: true, expandDirectories: false, ignore: ['**/node_modules/**'] });
  const tickets = (await Promise.all(matches.map(async (file) => ((await looksLikeTicket(file)) ? [path.normalize(file)] : [])))).flat();
  return tickets.length > 0 ? tickets : null;
}

async function findTicketsIn(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map(async (entry): Promise<string[]> => {
      const full = path.join(dir, entry.name);
      // Symlinked directories are not followed: they can loop, or lead out of the tree.
      if (entry.isDirectory()) {
        return entry.name.startsWith('.') || SKIPPED_DIRS.has(entry.name) ? [] : findTicketsIn(full);
      }
      const isFile = entry.isFile() || (entry.isSymbolicLink() && (await stat(full).then((s) => s.isFile(), () => false)));
      return isFile && (await looksLikeTicket(full)) ? [full] : [];
    }),
  );
  return nested.flat();
}

async function looksLikeTicket(file: string): Promise<boolean> {
  const extension = path.extname(file).toLowerCase();
  if (extension === '.yaml' || extension === '.yml') return true;
  if (extension === '.md') return startsWithFrontMatter(file);
  return false;
}

async function startsWithFrontMatter(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buffer = Buffer.alloc(64);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const head = buffer.toString('utf8', 0, bytesRead).replace(/^\uFEFF/, '');
    // The whole first line must be in the buffer (or be the whole file) to be `---`.
    return /^---[ \t]*(\r?\n|$)/.test(head) && (bytesRead < buffer.length || /\n/.test(head));
  } finally {
    await handle.close();
  }
}

/** Plain code-point order, so the result does not depend on the locale. */
function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
