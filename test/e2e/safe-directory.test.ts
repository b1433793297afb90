import { chmodSync, chownSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { makeDemoRepo, tempDir } from '../support/repo.js';

// git refuses a repository another user owns unless a safe.directory entry of the
// user's config trusts it. Making one takes root (chown); elsewhere the test is skipped.
const asRoot = process.getuid?.() === 0;

function ownedByNobody(): string {
  const repo = makeDemoRepo();
  chownRecursive(repo, 65534, 65534);
  // A temp folder is made private to its owner; the sandbox reads the host's objects
  // without root's powers, as any user would.
  chmodSync(repo, 0o755);
  return repo;
}

function chownRecursive(dir: string, uid: number, gid: number): void {
  chownSync(dir, uid, gid);
  for (const name of readdirSync(dir)) {
    const entry = path.join(dir, name);
    if (lstatSync(entry).isDirectory()) chownRecursive(entry, uid, gid);
    else chownSync(entry, uid, gid);
  }
}

function homeTrusting(dirs: string[]): string {
  const home = tempDir('corral-home-');
  mkdirSync(path.join(home, '.config'), { recursive: true });
  writeFileSync(path.join(home, '.gitconfig'), `[user]\n\tname = t\n\temail = t@example.com\n${dirs.map((d) => `[safe]\n\tdirectory = ${d}\n`).join('')}`);
  return home;
}

describe.skipIf(!asRoot)('a repository owned by another user', () => {
  it('is worked on when a safe.directory entry of the user config trusts it', async () => {
    const repo = ownedByNobody();
    const runs = tempDir('corral-runs-');
    const run = await runCli(['run', 'tickets/cap-fine.yaml', '--json', '--runs-dir', runs], { cwd: repo, env: { HOME: homeTrusting([repo]) } });
    expect(run.stderr).not.toContain('not inside a git repository');
    expect(run.exitCode).toBe(0);
    expect(runReport(run.stdout).status).toBe('passed');
  });

  it('is refused with exit 64, naming the repository and the fix, when nothing trusts it', async () => {
    const repo = ownedByNobody();
    const runs = tempDir('corral-runs-');
    const run = await runCli(['run', 'tickets/cap-fine.yaml', '--runs-dir', runs], { cwd: repo, env: { HOME: homeTrusting(['/somewhere/else']), NO_COLOR: '1' } });
    expect(run.exitCode).toBe(64);
    const said = run.stdout + run.stderr;
    expect(said).not.toContain('not inside a git repository');
    expect(said).toContain('owned by another user');
    expect(said).toContain(`git config --global --add safe.directory ${repo}`);
  });
});

describe('refusedForOwnership', () => {
  it('reads the refused repository from the fix git names, and nothing else', async () => {
    const { refusedForOwnership } = await import('../../src/git/git.js');
    const stderr = "fatal: detected dubious ownership in repository at '/r/x'\nTo add an exception for this directory, call:\n\n\tgit config --global --add safe.directory /r/x\n";
    expect(refusedForOwnership(stderr)).toBe('/r/x');
    expect(refusedForOwnership("\tgit config --global --add safe.directory '/r/a b'\n")).toBe('/r/a b');
    expect(refusedForOwnership('fatal: not a git repository (or any of the parent directories): .git\n')).toBeNull();
  });
});
