import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { extraWorktrees, gitIn, repoWithFiles } from '../support/repo.js';

// A worktree never checks a submodule out: its path is an empty folder, and git sees no
// change below it. What the agent writes there is in no patch and no commit, so it is
// judged by the fence, named, and the worktree kept: never "the agent changed nothing".

function repoWithSubmodule(allow: string): string {
  const repo = repoWithFiles({
    'src/a.txt': 'a\n',
    '.gitmodules': '[submodule "lib"]\n\tpath = lib\n\turl = ./lib-origin\n',
    'ticket.yaml': `task: t\nallow: ["${allow}"]\nmodel: replay:replay.yaml\nsandbox: none\npolicy:\n  allow: ["Bash(node -e:*)"]\n`,
    // A program writes it (what the guard cannot see), as a build step or a script might.
    'replay.yaml': [
      'turns:',
      '  - tools:',
      '      - Bash: {command: "node -e \\"require(\'fs\').writeFileSync(\'lib/patched.c\', \'int x;\\\\n\')\\""}',
      '  - text: done',
      '',
    ].join('\n'),
  });
  const commit = gitIn(repo, ['rev-parse', 'HEAD']).trim();
  gitIn(repo, ['update-index', '--add', '--cacheinfo', `160000,${commit},lib`]);
  gitIn(repo, ['commit', '-qm', 'add the lib submodule']);
  // An uninitialised submodule: its path is an empty folder, as in every worktree.
  mkdirSync(path.join(repo, 'lib'));
  repos.push(repo);
  return repo;
}

// The runs keep their worktrees, in the temp dir outside the test's repository: removed after each test.
const repos: string[] = [];
afterEach(() => {
  for (const repo of repos.splice(0)) for (const dir of extraWorktrees(repo)) rmSync(dir, { recursive: true, force: true });
});

describe('writes inside a submodule path', () => {
  it('are changes outside the fence that the patch cannot carry, and the worktree stays', async () => {
    const repo = repoWithSubmodule('src/**');
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(report.status).toBe('fence_violated');
    expect(run.exitCode).toBe(2);
    expect(report.reason).not.toContain('changed nothing');
    const verdict = report.changes.find((v: { change: { path: string } }) => v.change.path === 'lib/patched.c');
    expect(verdict).toMatchObject({ allowed: false });
    expect(verdict.reason).toContain('inside submodule lib');
    expect(report.warnings.join('\n')).toContain('written inside submodule lib are in neither the patch nor any commit');
    expect(report.worktree).not.toBeNull();
    expect(readFileSync(path.join(report.worktree, 'lib/patched.c'), 'utf8')).toBe('int x;\n');
    const text = await runCli(['run', 'ticket.yaml'], { cwd: repo });
    expect(text.stdout).toContain('lib/patched.c');
    expect(text.stdout).toContain('inside submodule lib');
  });

  it('allowed by the fence, still named and kept, never "changed nothing"', async () => {
    const repo = repoWithSubmodule('lib/**');
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(report.reason).not.toContain('changed nothing');
    expect(report.changes.map((v: { change: { path: string } }) => v.change.path)).toEqual(['lib/patched.c']);
    expect(report.warnings.join('\n')).toContain('in neither the patch nor any commit');
    expect(existsSync(path.join(report.worktree, 'lib/patched.c'))).toBe(true);
  });
});
