import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { tempDir } from '../support/repo.js';

// A git-lfs repository through the real CLI: the lfs filter the user set up globally
// (`git lfs install`) runs for corral's checkout and for the commit of the result, so the
// worktree holds the files and a rewritten file is committed as a pointer. Filters the
// repository's own config defines never run.

const lfs = spawnSync('git', ['lfs', 'version'], { encoding: 'utf8' });
const hasLfs = lfs.status === 0;
if (!hasLfs) console.warn('skipping the git-lfs tests: `git lfs` is not installed (apt-get install git-lfs)');

const POINTER = 'version https://git-lfs.github.com/spec/v1';

describe.skipIf(!hasLfs)('a git-lfs repository', () => {
  it('is checked out with its files, and a rewritten file is committed as a pointer; the repository\'s filters never run', async () => {
    const home = tempDir('corral-lfs-home-');
    const env = { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: undefined, XDG_CONFIG_HOME: path.join(home, '.config') };
    const git = (cwd: string, args: string[], input?: string) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', '-c', 'init.defaultBranch=main', ...args], { cwd, env, encoding: 'utf8', ...(input === undefined ? {} : { input }) });
    git(home, ['lfs', 'install', '--skip-repo']);

    const repo = tempDir('corral-lfs-repo-');
    const marker = path.join(home, 'repository-filter-ran');
    git(repo, ['init', '-q']);
    writeFileSync(path.join(repo, '.gitattributes'), '*.bin filter=lfs diff=lfs merge=lfs -text\n*.txt filter=own\n');
    writeFileSync(path.join(repo, 'data.bin'), 'original content\u0000\u0001\n');
    writeFileSync(path.join(repo, 'notes.txt'), 'notes\n');
    writeFileSync(path.join(repo, 'ticket.yaml'), [
      'task: rewrite data.bin',
      'allow: ["data.bin"]',
      // Setup sees the file itself, not its pointer.
      'setup: ["grep -q \'original content\' data.bin"]',
      'sandbox: none',
      'model: replay:replay.yaml',
      '',
    ].join('\n'));
    writeFileSync(path.join(repo, 'replay.yaml'), 'turns:\n  - tools:\n      - Bash: {command: "printf \'rewritten content\\\\001\\\\n\' > data.bin"}\n  - text: Done.\n');
    git(repo, ['add', '-A']);
    git(repo, ['commit', '-qm', 'lfs']);
    expect(git(repo, ['cat-file', '-p', 'HEAD:data.bin'])).toContain(POINTER);
    // The repository's own config names filters of its own, the lfs one included.
    git(repo, ['config', 'filter.own.clean', `touch ${marker}; cat`]);
    git(repo, ['config', 'filter.own.smudge', `touch ${marker}; cat`]);
    git(repo, ['config', 'filter.lfs.process', `sh -c 'touch ${marker}'`]);
    git(repo, ['config', 'filter.lfs.smudge', `touch ${marker}; git-lfs smudge -- %f`]);

    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { HOME: home } });
    const report = runReport(run.stdout);
    expect(report.reason).not.toContain('setup');
    expect(report.status).toBe('passed');
    expect(existsSync(marker)).toBe(false);

    const committed = git(repo, ['cat-file', '-p', `${report.branch}:data.bin`]);
    expect(committed).toContain(POINTER);
    expect(committed).not.toContain('rewritten');
    expect(git(repo, ['lfs', 'smudge'], committed)).toBe('rewritten content\u0001\n');
    const patch = readFileSync(report.patch, 'utf8');
    expect(patch).toContain(POINTER);
    expect(patch).not.toContain('rewritten content');
    expect(existsSync(marker)).toBe(false);

    // A repository whose config names a git-lfs program of its own gets no lfs filter at all.
    git(repo, ['config', 'lfs.extension.own.clean', `touch ${marker}; cat`]);
    git(repo, ['config', 'lfs.extension.own.smudge', `touch ${marker}; cat`]);
    git(repo, ['config', 'lfs.extension.own.priority', '0']);
    const refused = runReport((await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { HOME: home } })).stdout);
    expect(refused.status).toBe('failed');
    expect(refused.reason).toContain('setup command');
    expect(existsSync(marker)).toBe(false);
  });
});
