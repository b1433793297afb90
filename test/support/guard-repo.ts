import { copyFileSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { PROJECT_ROOT } from './cli.js';
import { gitIn, tempDir } from './repo.js';

export const CORPUS_DIR = path.join(PROJECT_ROOT, 'test/guard/corpus');

interface RepoSpec {
  files: Record<string, string>;
  symlinks: Record<string, string>;
}

/** The repository the guard corpus runs against, as test/guard/corpus/repo.yaml describes it. */
export function makeGuardRepo(): string {
  const dir = tempDir('corral-guard-');
  const spec = parse(readFileSync(path.join(CORPUS_DIR, 'repo.yaml'), 'utf8')) as RepoSpec;
  for (const [name, content] of Object.entries(spec.files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  for (const [name, target] of Object.entries(spec.symlinks)) symlinkSync(target, path.join(dir, name));
  // Every case file and ticket of the corpus sits beside the files it judges.
  for (const name of readdirSync(CORPUS_DIR)) if (name.endsWith('.yaml') && name !== 'repo.yaml') copyFileSync(path.join(CORPUS_DIR, name), path.join(dir, name));
  gitIn(dir, ['init', '-q']);
  gitIn(dir, ['add', '-A']);
  gitIn(dir, ['commit', '-q', '-m', 'guard corpus repository']);
  return dir;
}
