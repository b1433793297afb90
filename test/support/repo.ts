import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { PROJECT_ROOT } from './cli.js';

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

export function gitIn(cwd: string, args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=test', '-c', 'user.email=test@example.com', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

/** A fresh temp directory, removed after the test file. */
export function tempDir(prefix = 'corral-test-'): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

/**
 * A real git repository holding copies of the project's `tickets/` and `fixtures/`, so the
 * example tickets run against it exactly as they do against a checkout of corral.
 */
export function makeDemoRepo(): string {
  const dir = tempDir('corral-demo-');
  cpSync(path.join(PROJECT_ROOT, 'tickets'), path.join(dir, 'tickets'), { recursive: true });
  cpSync(path.join(PROJECT_ROOT, 'fixtures'), path.join(dir, 'fixtures'), { recursive: true });
  gitIn(dir, ['init', '-q']);
  gitIn(dir, ['add', '-A']);
  gitIn(dir, ['commit', '-q', '-m', 'demo']);
  return dir;
}

/** Names of worktrees git knows of in `repo`, besides the main one. */
export function extraWorktrees(repo: string): string[] {
  return gitIn(repo, ['worktree', 'list', '--porcelain'])
    .split('\n')
    .filter((l) => l.startsWith('worktree '))
    .map((l) => l.slice('worktree '.length))
    .filter((p) => p !== repo);
}

/** Writes files (repository-relative path → content) into `repo` and commits them. */
export function commitFiles(repo: string, files: Record<string, string>): void {
  for (const [name, content] of Object.entries(files)) writeFileSync(path.join(repo, name), content);
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-qm', `test files: ${Object.keys(files).join(', ')}`]);
}

/** A fresh git repository holding `files` (path → content; a nested path makes its folders), committed. */
export function repoWithFiles(files: Record<string, string>, prefix = 'corral-repo-'): string {
  const repo = tempDir(prefix);
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(repo, name)), { recursive: true });
    writeFileSync(path.join(repo, name), content);
  }
  gitIn(repo, ['init', '-q']);
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-qm', 'test repo']);
  return repo;
}

/** The pid of a process that has already exited. */
export function deadPid(): number {
  const pid = spawnSync('true').pid;
  if (pid === undefined) throw new Error('could not start `true`');
  return pid;
}

/** A worktree of `repo` made by git itself (`git worktree add ARGS`), in a temp folder. */
export function linkedWorktree(repo: string, name: string, args: string[]): string {
  const dir = path.join(tempDir('corral-linked-'), name);
  gitIn(repo, ['worktree', 'add', '-q', ...args, dir]);
  return dir;
}

/** The folders of `repo`'s worktrees, as git lists them. */
export function listedDirs(repo: string): string[] {
  return gitIn(repo, ['worktree', 'list', '--porcelain'])
    .split('\n')
    .filter((line) => line.startsWith('worktree '))
    .map((line) => line.slice('worktree '.length));
}
