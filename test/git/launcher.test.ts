import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { git, gitBytes } from '../../src/git/git.js';
import { childrenOf } from '../support/sleeps.js';
import { makeRepo, makeTempDir, runGit } from '../ticket/temp-repo.js';

// git is started by a few long-lived shells (src/git/launcher.ts), the command written to
// one as a line: whatever the arguments, input and environment hold must reach git unchanged,
// and many calls at once must each get their own answer.

const ODD = `it's "quoted" $HOME \`id\` \\ back\nslash; & | > *`;

describe('git through the shared launcher', () => {
  it('passes arguments, input and environment values through unchanged, quotes and newlines included', async () => {
    const repo = makeRepo();
    const expected = execFileSync('git', ['hash-object', '--stdin'], { cwd: repo, input: ODD, encoding: 'utf8' }).trim();
    expect((await git(repo, ['hash-object', '--stdin'], { input: ODD })).stdout.trim()).toBe(expected);
    const identEnv = { GIT_AUTHOR_NAME: ODD.replaceAll('\n', ' '), GIT_AUTHOR_EMAIL: 'o@example.invalid', GIT_AUTHOR_DATE: '1700000000 +0000' };
    const ident = await git(repo, ['var', 'GIT_AUTHOR_IDENT'], { env: identEnv });
    expect(ident.stdout).toBe(execFileSync('git', ['var', 'GIT_AUTHOR_IDENT'], { cwd: repo, env: { ...process.env, ...identEnv }, encoding: 'utf8' }));
    expect(ident.stdout).toContain('$HOME `id`');
    const missing = await git(repo, ['rev-parse', '--verify', '--quiet', '--end-of-options', ODD], { allowFailure: true });
    expect(missing.exitCode).toBe(1);
  });

  it('answers many calls at once, each with its own output, as bytes too', async () => {
    const repo = makeRepo();
    const words = Array.from({ length: 24 }, (_, i) => `word ${i}\n`);
    const hashes = await Promise.all(words.map((word) => git(repo, ['hash-object', '--stdin'], { input: word })));
    expect(hashes.map((h) => h.stdout.trim())).toEqual(words.map((word) => execFileSync('git', ['hash-object', '--stdin'], { cwd: repo, input: word, encoding: 'utf8' }).trim()));
    const head = runGit(repo, ['rev-parse', 'HEAD']).trim();
    expect((await gitBytes(repo, ['rev-parse', 'HEAD'])).toString('utf8').trim()).toBe(head);
  });

  it('runs in a relative folder as corral sees it', async () => {
    const repo = makeRepo();
    const relative = path.relative(process.cwd(), repo);
    expect((await git(relative, ['rev-parse', '--show-toplevel'])).stdout.trim()).toBe(repo);
  });

  it('fails a call in a folder that is not there, or outside any repository, as a failed git', async () => {
    const outside = makeTempDir();
    await expect(git(`${outside}/gone`, ['status'])).rejects.toThrow(/failed/);
    const r = await git(outside, ['rev-parse', '--show-toplevel'], { allowFailure: true });
    expect(r.exitCode).not.toBe(0);
    expect(r.stderr).toMatch(/not a git repository/);
  });

  it('leaves no zombie behind: each finished git is reaped by the time the next one starts', async () => {
    const repo = makeRepo();
    for (let i = 0; i < 40; i++) await git(repo, ['rev-parse', 'HEAD']);
    const launcher = childrenOf(process.pid).find((child) => child.comm === 'sh');
    expect(launcher).toBeDefined();
    // The last call's own subshell may not be reaped yet; the 39 before it must be.
    expect(childrenOf(launcher!.pid).filter((child) => child.state === 'Z').length).toBeLessThanOrEqual(2);
  });

  it('forks once a git: each git is the child of one of a few long-lived shells', async () => {
    const repo = makeRepo();
    // A shell alias runs as git's child: its parent's parent is whatever started git.
    const parentOfGit = ['-c', 'alias.parent=!f() { cut -d" " -f4 /proc/$PPID/stat; }; f', 'parent'];
    const parents = new Set<string>();
    for (let i = 0; i < 12; i++) parents.add((await git(repo, parentOfGit)).stdout.trim());
    const shells = childrenOf(process.pid).filter((child) => child.comm === 'sh');
    const laneShells = new Set([...shells, ...shells.flatMap((shell) => childrenOf(shell.pid))].map((shell) => String(shell.pid)));
    // One after the other, the calls go to the same shell; a subshell forked per call would differ each time.
    expect(parents.size).toBe(1);
    expect(laneShells.has([...parents][0]!)).toBe(true);
  });

  it('runs several gits at once', async () => {
    const repo = makeRepo();
    const arrived = makeTempDir();
    // Each call waits (10 s at most) until four are running; run one at a time, none would see the others.
    const meet = ['-c', `alias.meet=!f() { touch '${arrived}'/$$; i=0; while [ "$(ls '${arrived}' | wc -l)" -lt 4 ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; ls '${arrived}' | wc -l; }; f`, 'meet'];
    const counts = await Promise.all(Array.from({ length: 4 }, () => git(repo, meet)));
    expect(counts.map((c) => Number(c.stdout.trim()))).toEqual([4, 4, 4, 4]);
  });

  // Last: from here on this process spawns git directly.
  it('runs git directly once its folder is gone (a temp cleaner, a corral of another pid namespace)', async () => {
    const repo = makeRepo();
    await git(repo, ['rev-parse', 'HEAD']);
    const folders = readdirSync(tmpdir()).filter((name) => name.startsWith(`corral-@git+${process.pid}-`));
    expect(folders).toHaveLength(1);
    rmSync(path.join(tmpdir(), folders[0]!), { recursive: true, force: true });
    const head = runGit(repo, ['rev-parse', 'HEAD']).trim();
    // One call with input (its file cannot be written), calls at once without (sh cannot open their output).
    const [hashed, ...heads] = await Promise.all([git(repo, ['hash-object', '--stdin'], { input: ODD }), ...Array.from({ length: 4 }, () => git(repo, ['rev-parse', 'HEAD']))]);
    expect(hashed!.stdout.trim()).toBe(execFileSync('git', ['hash-object', '--stdin'], { cwd: repo, input: ODD, encoding: 'utf8' }).trim());
    expect(heads.map((r) => r.stdout.trim())).toEqual([head, head, head, head]);
    expect((await git(repo, ['rev-parse', 'HEAD'])).stdout.trim()).toBe(head);
  });
});
