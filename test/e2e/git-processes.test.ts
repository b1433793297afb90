import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonLines, runCli } from '../support/cli.js';
import { preloadProbe } from '../support/probe.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// Every git process costs a fork of corral's main thread (synchronous in Node, 5–15 ms on
// a loaded machine), and two tickets of a batch share that thread: how many a ticket
// starts is what a batch scales with. Counted with a `git` first on PATH that logs each
// call (its subcommand, after the hardening `-c` pairs) and then runs the real one. The
// bounds are what corral reaches today (docs/performance.md, "Batch"): a regression fails.

/** A directory holding a logging `git`, and the subcommands it saw so far. */
function loggingGit(): { bin: string; calls: () => string[] } {
  const bin = tempDir('corral-logging-git-');
  const log = path.join(bin, 'calls');
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  writeFileSync(log, '');
  writeFileSync(
    path.join(bin, 'git'),
    [
      '#!/bin/sh',
      // The first word that is neither `-c` nor its value: the subcommand (`worktree list` keeps its second word).
      'skip=0; sub=""; next=""',
      'for a in "$@"; do',
      '  if [ "$skip" = 1 ]; then skip=0; continue; fi',
      '  if [ -n "$sub" ]; then next="$a"; break; fi',
      '  case "$a" in -c) skip=1;; -*) ;; *) sub="$a";; esac',
      'done',
      `if [ "$sub" = worktree ]; then sub="$sub $next"; fi`,
      `echo "$sub" >> '${log}'`,
      `exec '${realGit}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(path.join(bin, 'git'), 0o755);
  return { bin, calls: () => readFileSync(log, 'utf8').split('\n').filter((line) => line !== '') };
}

function count(calls: string[], subcommand: string): number {
  return calls.filter((call) => call === subcommand).length;
}

/** Ticket `id` writes `out/<id>.txt` and runs `Bash: true` twice, then is checked. */
function ticketFiles(id: string): Record<string, string> {
  return {
    [`replay/${id}.yaml`]: `turns:\n  - tools:\n      - Write: {file_path: out/${id}.txt, content: "${id}\\n"}\n  - tools:\n      - Bash: {command: "true"}\n  - tools:\n      - Bash: {command: "true"}\n  - text: done\n`,
    [`tickets/${id}.yaml`]: `id: ${id}\ntask: write out/${id}.txt\nallow: ["out/${id}.txt"]\nsandbox: none\nmodel: replay:../replay/${id}.yaml\nchecks: ["test -f out/${id}.txt"]\n`,
  };
}

describe('the git processes a ticket starts', () => {
  it('a no-op ticket starts at most 17, never asks for HEAD apart from the refs, and diffs nothing', async () => {
    const repo = repoWithFiles({ 'ticket.yaml': 'id: noop\ntask: t\nallow: ["**"]\nallow_empty: true\nmodel: replay:replay.yaml\nsandbox: none\n', 'replay.yaml': 'turns:\n  - text: Done.\n' }, 'corral-git-count-');
    const git = loggingGit();
    const result = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { PATH: `${git.bin}:${process.env.PATH ?? ''}` } });
    expect(result.exitCode, result.stderr).toBe(0);
    const calls = git.calls();
    // Before issue 26 it was 23: symbolic-ref twice (HEAD is marked in the ref listing),
    // rev-parse for the result branch (read from that listing) and for the worktree's own
    // git files (read from its `.git` file).
    expect(calls.length, calls.join('\n')).toBeLessThanOrEqual(17);
    expect(count(calls, 'symbolic-ref'), calls.join('\n')).toBe(0);
    // The snapshot staged nothing, so its index is the base's own: no diff to list the
    // changes (there are none) and none for the patch (it is empty).
    expect(count(calls, 'diff-index'), calls.join('\n')).toBe(0);
    // Finding the repository and the base, once, when the ticket is loaded.
    expect(count(calls, 'rev-parse'), calls.join('\n')).toBe(1);
  });

  it("asks git for the ticket's repository before the run's code has loaded, and only once", async () => {
    const repo = repoWithFiles({ 'ticket.yaml': 'id: early\ntask: t\nallow: ["**"]\nallow_empty: true\nmodel: replay:replay.yaml\nsandbox: none\n', 'replay.yaml': 'turns:\n  - text: Done.\n' }, 'corral-git-early-');
    const git = loggingGit();
    // A probe in corral's process, one clock: when it first starts a process (git's
    // launcher), and when it first reads the ticket file (the run's code has loaded by then).
    const probe = preloadProbe('corral-git-early-probe-', (dir) => [
      `const fs = require('node:fs');`,
      `const cp = require('node:child_process');`,
      `const note = (what) => fs.appendFileSync(${JSON.stringify(path.join(dir, 'order'))}, what + '\\n');`,
      `const spawn = cp.spawn;`,
      `let spawned = false;`,
      `cp.spawn = function (...args) { if (!spawned) { spawned = true; note('first process'); } return spawn.apply(this, args); };`,
      `const readFile = fs.promises.readFile;`,
      `let read = false;`,
      `fs.promises.readFile = function (file, ...rest) { if (!read && String(file).endsWith('ticket.yaml')) { read = true; note('ticket read'); } return readFile.call(this, file, ...rest); };`,
    ]);
    const result = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { PATH: `${git.bin}:${process.env.PATH ?? ''}`, NODE_OPTIONS: probe.nodeOptions } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(readFileSync(path.join(probe.dir, 'order'), 'utf8').trim().split('\n')).toEqual(['first process', 'ticket read']);
    expect(count(git.calls(), 'rev-parse'), git.calls().join('\n')).toBe(1);
  });

  it('leaves a ticket path it cannot look at to the ticket loader, which refuses it with exit 64', async () => {
    const repo = repoWithFiles({ 'ticket.yaml': 'task: t\n' }, 'corral-git-early-bad-');
    const result = await runCli(['run', 'ticket.yaml/inside'], { cwd: repo });
    expect(result.exitCode, result.stderr).toBe(64);
    expect(result.stderr).toMatch(/no such file or directory: \S*ticket\.yaml\/inside/);
  });

  it('a batch lists the worktrees once to find killed runs, not once per ticket, and each ticket starts at most 17.5', async () => {
    const ids = ['b1', 'b2', 'b3', 'b4'];
    const repo = repoWithFiles(Object.assign({ 'README.md': 'batch\n' }, ...ids.map(ticketFiles)), 'corral-git-count-batch-');
    const git = loggingGit();
    const result = await runCli(['run', 'tickets', '--jobs', '2', '--json'], { cwd: repo, env: { PATH: `${git.bin}:${process.env.PATH ?? ''}` } });
    expect(result.exitCode, result.stderr).toBe(0);
    expect(jsonLines(result.stdout).tickets.map((ticket) => ticket.status)).toEqual(ids.map(() => 'passed'));
    const calls = git.calls();
    expect(calls.length / ids.length, calls.join('\n')).toBeLessThanOrEqual(17.5);
    // Two tickets may each list before the other has made its worktree; then no more
    // for killed runs, and one per ticket that commits (is its branch checked out somewhere?).
    expect(count(calls, 'worktree list'), calls.join('\n')).toBeLessThanOrEqual(2 + ids.length);
    expect(count(calls, 'worktree add')).toBe(ids.length);
    // The repository and HEAD of the tickets' folder, asked once for all four (it was once a ticket).
    expect(count(calls, 'rev-parse'), calls.join('\n')).toBe(1);
    expect(count(calls, 'symbolic-ref')).toBe(0);
  });
});
