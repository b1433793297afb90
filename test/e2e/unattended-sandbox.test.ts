import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

/** A PATH with git, bash and node but no bubblewrap: a machine where the sandbox cannot work. */
function pathWithoutBwrap(): string {
  const bin = tempDir('corral-nobwrap-bin-');
  for (const tool of ['git', 'bash', 'sh', 'env', 'cat', 'true']) {
    const found = execFileSync('bash', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim();
    symlinkSync(found, path.join(bin, tool));
  }
  symlinkSync(process.execPath, path.join(bin, 'node'));
  return bin;
}

const REPLAY = 'turns:\n  - tools:\n      - Write: {file_path: src/out.txt, content: done}\n  - text: done\n';

function repoWith(ticket: string): string {
  return repoWithFiles({ 'src/app.js': 'a\n', 'replay.yaml': REPLAY, 't.yaml': `task: x\nallow: ["src/**"]\nmodel: replay:replay.yaml\n${ticket}` }, 'corral-unattended-');
}

describe('unattended means sandboxed', () => {
  const noBwrap = pathWithoutBwrap();

  it('stops a CI run whose sandbox nobody chose, on a machine without bubblewrap, before anything runs (exit 64)', async () => {
    const repo = repoWith('');
    const run = await runCli(['run', 't.yaml'], { cwd: repo, env: { PATH: noBwrap, CI: 'true' } });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/t\.yaml:1:1: sandbox: an unattended run needs a sandbox, and bubblewrap does not work on this machine/);
    expect(run.stderr).toContain('sandbox: none');
    expect(existsSync(path.join(repo, '.corral', 'runs')) ? readdirSync(path.join(repo, '.corral', 'runs')) : []).toEqual([]);
    const flagged = await runCli(['run', 't.yaml', '--unattended'], { cwd: repo, env: { PATH: noBwrap } });
    expect(flagged.exitCode).toBe(64);
    expect((await runCli(['check', 't.yaml'], { cwd: repo, env: { PATH: noBwrap, CI: 'true' } })).exitCode).toBe(64);
  });

  it('runs it when the ticket or corral.yaml chooses no sandbox on purpose, or someone is there', async () => {
    for (const choice of ['sandbox: none\n', 'sandbox: auto\n', 'sandbox: {mode: auto}\n']) {
      const repo = repoWith(choice);
      const run = await runCli(['run', 't.yaml'], { cwd: repo, env: { PATH: noBwrap, CI: 'true' } });
      expect(run.exitCode, `${choice}${run.stderr}`).toBe(0);
    }
    const configured = repoWith('');
    writeFileSync(path.join(configured, 'corral.yaml'), 'sandbox: none\n');
    expect((await runCli(['run', 't.yaml'], { cwd: configured, env: { PATH: noBwrap, CI: 'true' } })).exitCode).toBe(0);
    // Without CI or --unattended it is a warning, as before.
    const attended = await runCli(['run', 't.yaml'], { cwd: repoWith(''), env: { PATH: noBwrap } });
    expect(attended.exitCode).toBe(0);
    expect(attended.stdout + attended.stderr).toContain('sandbox: none (bubblewrap does not work here');
  });
});

describe('the sandbox field', () => {
  it('refuses a read folder that holds credentials and an exposed path outside the worktree, naming the field', async () => {
    const home = tempDir('corral-home-');
    mkdirSync(path.join(home, '.cache', 'ms-playwright'), { recursive: true });
    const repo = repoWith('sandbox:\n  mode: none\n  read: ["~/.cache/ms-playwright", "~/.ssh", "~", "~/.config/gh/hosts.yml"]\n  expose: [.env.test, ../x]\n');
    const run = await runCli(['check', 't.yaml'], { cwd: repo, env: { HOME: home } });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/sandbox\.read\.1: ~\/\.ssh .*credentials/);
    expect(run.stderr).toMatch(/sandbox\.read\.2: ~ .*home directory/);
    expect(run.stderr).toMatch(/sandbox\.read\.3: ~\/\.config\/gh\/hosts\.yml .*credentials/);
    expect(run.stderr).toMatch(/sandbox\.expose\.1: "\.\.\/x" is not a path inside the worktree/);
    expect(run.stderr).not.toMatch(/sandbox\.read\.0|sandbox\.expose\.0/);
  });

  it('suggests the field a typo meant', async () => {
    const run = await runCli(['check', 't.yaml'], { cwd: repoWith('sandbox: {mode: none, exposed: [.env.test]}\n') });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('expose');
  });
});
