import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './repo.js';

/**
 * A script preloaded into a process under test (`NODE_OPTIONS: probe.nodeOptions`) to see
 * what corral does inside it: `lines(dir)` is its code, and `dir` a temp dir of its own
 * where it writes what it saw.
 */
export function preloadProbe(label: string, lines: (dir: string) => string[]): { dir: string; nodeOptions: string } {
  const dir = tempDir(label);
  const file = path.join(dir, 'probe.cjs');
  writeFileSync(file, [...lines(dir), ''].join('\n'));
  return { dir, nodeOptions: `--require ${file}` };
}
