import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from './cli.js';
import { gitIn, tempDir } from './repo.js';

export const CORPUS_DIR = path.join(PROJECT_ROOT, 'test/guard/corpus');

const FILES: Record<string, string> = {
  '.env': 'API_KEY=sk-corpus-not-a-real-key\n',
  '.env.local': 'API_KEY=sk-corpus-local\n',
  '.env.example': 'API_KEY=\n',
  '.gitignore': '.env\n.env.local\n',
  'package.json': '{"name": "corpus", "scripts": {"test": "node --test"}}\n',
  'src/app.js': 'export const app = 1;\n',
  'src/util.js': 'export const util = 2;\n',
  'test/app.test.js': "import test from 'node:test';\ntest('app', () => {});\n",
  'docs/guide.md': '# Guide\n',
  'build/out.js': 'built\n',
  'migrations/001.sql': 'create table t (id int);\n',
  'scripts/build.sh': 'echo build\n',
  'secrets/prod.json': '{"password": "corpus"}\n',
  'replay.yaml': 'turns:\n  - text: done\n',
};

/**
 * The repository the guard corpus runs against (see test/guard/corpus/README.md):
 * secrets, a fence's worth of folders, and symlinks that lead out of it.
 */
export function makeGuardRepo(): string {
  const dir = tempDir('corral-guard-');
  for (const [name, content] of Object.entries(FILES)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  symlinkSync('/etc', path.join(dir, 'link-etc'));
  symlinkSync('/etc/passwd', path.join(dir, 'src/passwd-link'));
  symlinkSync('/tmp/corral-nowhere/file', path.join(dir, 'dangling'));
  for (const name of ['ticket.yaml', 'ticket-rules.yaml', 'dangerous.yaml', 'benign.yaml']) {
    copyFileSync(path.join(CORPUS_DIR, name), path.join(dir, name));
  }
  gitIn(dir, ['init', '-q']);
  gitIn(dir, ['add', '-A']);
  gitIn(dir, ['commit', '-q', '-m', 'guard corpus repository']);
  return dir;
}
