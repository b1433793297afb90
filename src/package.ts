import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package.json of this copy of corral and the folder it is in, found by walking up
 * from this module: the same answer from src/, from dist/ and from the bundled CLI, which
 * sit at different depths below it.
 */
export function corralPackage(): { dir: string; version: string } {
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const found = readPackage(path.join(dir, 'package.json'));
    if (found?.name === 'corral') return { dir, version: String(found.version) };
    if (path.dirname(dir) === dir) throw new Error(`corral's package.json is not above ${start}`);
  }
}

function readPackage(file: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}

/** This corral's version, from its package.json. */
export const CORRAL_VERSION = corralPackage().version;
