import { execa } from 'execa';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { describe, expect, it, vi } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT, jsonLines } from '../support/cli.js';
import { gitIn, repoWithFiles, tempDir } from '../support/repo.js';

// An exit code says what happened at every moment a stop signal can come: 130 for
// SIGINT, SIGTERM and SIGHUP alike, also before the CLI has set up a run; and what the
// summary prints and the exit code agree.

const BIN = path.join(PROJECT_ROOT, 'bin/corral.cjs');

/**
 * A directory holding a `git` that runs the real one, but first waits at the first call
 * whose arguments include `word` (any call for '') until `release()`; `arrived` once one is waiting.
 */
function heldGit(word: string): { bin: string; arrived: () => boolean; release: () => void } {
  const bin = tempDir('corral-held-git-');
  const arrived = path.join(bin, 'arrived');
  const go = path.join(bin, 'go');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const matches = word === '' ? 'true' : `case " $* " in *' ${word} '*) true;; *) false;; esac`;
  writeFileSync(
    path.join(bin, 'git'),
    `#!/bin/sh\nif ${matches} && mkdir '${arrived}' 2>/dev/null; then while [ ! -e '${go}' ]; do sleep 0.05; done; fi\nexec '${realGit}' "$@"\n`,
  );
  chmodSync(path.join(bin, 'git'), 0o755);
  return { bin, arrived: () => existsSync(arrived), release: () => writeFileSync(go, '') };
}

/** corral run on `repo`'s ticket.yaml, finding `git` (a heldGit's folder) first on PATH. */
function corralWithGit(repo: string, gitBin: string, args: string[] = []) {
  return execa('node', [BIN, 'run', 'ticket.yaml', ...args], { cwd: repo, reject: false, stdin: 'ignore', env: { NO_COLOR: '1', XDG_CONFIG_HOME: NO_USER_CONFIG, PATH: `${gitBin}:${process.env.PATH ?? ''}` } });
}

const PASSING_TICKET = { 'ticket.yaml': 'id: signal-moment\ntask: t\nallow: ["**"]\nallow_empty: true\nmodel: replay:replay.yaml\nsandbox: auto\n', 'replay.yaml': 'turns:\n  - text: Done.\n' };

describe('a stop signal before the run has begun', () => {
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
    it(`${signal} while the tickets are still being read exits 130`, async () => {
      const repo = repoWithFiles(PASSING_TICKET, 'corral-early-signal-');
      // corral is held at its first git call: finding the ticket's repository.
      const git = heldGit('');
      const child = corralWithGit(repo, git.bin);
      try {
        await vi.waitFor(() => expect(git.arrived()).toBe(true), { timeout: 60_000, interval: 20 });
        child.kill(signal);
        const result = await child;
        expect(result.signal ?? null).toBe(null);
        expect(result.exitCode).toBe(130);
      } finally {
        git.release();
        child.kill('SIGKILL');
      }
    });
  }
});

/**
 * Runs corral on `repo` with its git held at the first call naming `word`, sends SIGTERM
 * there, and lets git go on once corral has taken the signal in; the run's JSON lines.
 */
async function sigtermAtGit(repo: string, word: string): Promise<{ exitCode: number | undefined; tickets: any[]; totals: any }> {
  const git = heldGit(word);
  const child = corralWithGit(repo, git.bin, ['--json']);
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  try {
    await vi.waitFor(() => expect(git.arrived()).toBe(true), { timeout: 60_000, interval: 20 });
    child.kill('SIGTERM');
    await vi.waitFor(() => expect(stderr).toContain('SIGTERM'), { timeout: 30_000, interval: 20 });
    git.release();
    const result = await child;
    return { exitCode: result.exitCode, ...jsonLines(String(result.stdout)) };
  } finally {
    git.release();
    child.kill('SIGKILL');
  }
}

describe('SIGTERM while a passed run commits its result', () => {
  it('lets the run finish: the summary says passed, the branch is there, and the exit code is 0', async () => {
    const repo = repoWithFiles(PASSING_TICKET, 'corral-commit-signal-');
    // Held at `update-ref`: moving the result's branch, which only a passed run does, after
    // its verdict. Not at `commit-tree`: the commit is written while the fence is read,
    // before the verdict, and a signal then still means interrupted (below).
    const { tickets, totals, exitCode } = await sigtermAtGit(repo, 'update-ref');
    expect(tickets.map((ticket) => ticket.status)).toEqual(['passed']);
    expect(totals.exitCode).toBe(0);
    expect(exitCode).toBe(0);
    expect(gitIn(repo, ['rev-parse', '--verify', '--quiet', `refs/heads/${tickets[0].branch}`]).trim()).toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('SIGTERM while a run that would pass is still being judged', () => {
  it('ends it interrupted: no branch, the change kept as a patch, exit 130', async () => {
    const repo = repoWithFiles(
      {
        'ticket.yaml': 'id: signal-judged\ntask: t\nallow: ["**"]\nmodel: replay:replay.yaml\nsandbox: auto\n',
        'replay.yaml': 'turns:\n  - tools:\n      - Write: {file_path: notes.txt, content: "kept\\n"}\n  - text: Done.\n',
      },
      'corral-judged-signal-',
    );
    // Held where the fence reads the worktree's changes, before the verdict.
    const { tickets, totals, exitCode } = await sigtermAtGit(repo, '--raw');
    expect(tickets.map((ticket) => ticket.status)).toEqual(['interrupted']);
    expect(totals.exitCode).toBe(130);
    expect(exitCode).toBe(130);
    expect(gitIn(repo, ['for-each-ref', '--format=%(refname)', 'refs/heads/corral/']).trim()).toBe('');
    expect(readFileSync(path.resolve(repo, tickets[0].patch), 'utf8')).toContain('+kept');
  });
});
