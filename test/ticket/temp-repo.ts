import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A fresh directory under the OS temp dir, resolved through symlinks (macOS /var), removed after the test file. */
export function makeTempDir(prefix = 'corral-ticket-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/** Writes `files` (relative path → content) under `dir`, creating folders. */
export function writeFiles(dir: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) {
    const full = path.join(dir, name);
    fs.mkdirSync(path.dirname(full), { recursive: true });
    fs.writeFileSync(full, content);
  }
}

export function runGit(dir: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A real git repository in a temp dir with `files` committed on `main` (none: no commits). */
export function makeRepo(files: Record<string, string> = { 'README.md': 'hello\n' }): string {
  const dir = makeTempDir('corral-repo-');
  runGit(dir, ['init', '-q', '-b', 'main']);
  writeFiles(dir, files);
  if (Object.keys(files).length > 0) {
    runGit(dir, ['add', '-A']);
    runGit(dir, ['commit', '-q', '-m', 'initial']);
  }
  return dir;
}
