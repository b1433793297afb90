import { readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { extraWorktrees, makeDemoRepo } from '../support/repo.js';

const BAD_TICKET = `title: broken
alow:
  - src/**
budget:
  steps: many
checks:
  - run: 42
base: no-such-ref
forbid: ["/etc/**"]
`;

describe('corral check and ticket errors through the CLI', () => {
  it('accepts the example tickets', async () => {
    const repo = makeDemoRepo();
    const run = await runCli(['check', 'tickets/'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    expect(run.stdout).toContain('ok  tickets/slugify-punctuation.md  (slugify-punctuation)');
  });

  it('reports every problem of a file at once with file, line, column and field, and exits 64', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'bad.yaml'), BAD_TICKET);
    const run = await runCli(['check', 'bad.yaml', 'tickets/cap-fine.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    const err = run.stderr;
    expect(err).toMatch(/bad\.yaml:2:1: alow: unknown field.*allow/);
    expect(err).toMatch(/bad\.yaml:5:10: budget\.steps:/);
    expect(err).toMatch(/bad\.yaml:7:10: checks\.0\.run:/);
    expect(err).toMatch(/bad\.yaml:\d+:\d+: task:/);
    expect(err).toMatch(/bad\.yaml:9:\d+: forbid\.0:/);
    expect(run.stdout).toContain('ok  tickets/cap-fine.yaml');
  });

  it('corral run refuses to start anything when a ticket is bad', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'tickets', 'zz-bad.yaml'), BAD_TICKET);
    const run = await runCli(['run', 'tickets/'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('nothing was run');
    expect(run.stderr).toMatch(/tickets\/zz-bad\.yaml:2:1: alow/);
    expect(extraWorktrees(repo)).toEqual([]);
    expect(readdirSync(repo)).not.toContain('.corral');
  });

  it('names a repo that is not a git repository and a base that does not resolve', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'norepo.yaml'), 'task: t\nallow: ["**"]\nrepo: /\n');
    writeFileSync(path.join(repo, 'nobase.yaml'), 'task: t\nallow: ["**"]\nbase: does-not-exist\n');
    const run = await runCli(['check', 'norepo.yaml', 'nobase.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/norepo\.yaml:3:7: repo: .*not .*git repository/);
    expect(run.stderr).toMatch(/nobase\.yaml:3:7: base: .*does-not-exist/);
  });

  it('reads .yml tickets and names a missing allow and task', async () => {
    const repo = makeDemoRepo();
    writeFileSync(path.join(repo, 'short.yml'), 'title: no allow, no task\n');
    const run = await runCli(['check', 'short.yml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/short\.yml:1:1: allow: .*required/i);
    expect(run.stderr).toMatch(/short\.yml:1:1: task: .*required/i);
  });

  it('bad usage exits 64, --version and --help exit 0', async () => {
    const repo = makeDemoRepo();
    expect((await runCli(['run'], { cwd: repo })).exitCode).toBe(64);
    expect((await runCli(['frobnicate'], { cwd: repo })).exitCode).toBe(64);
    expect((await runCli(['run', 'missing.yaml'], { cwd: repo })).exitCode).toBe(64);
    const version = await runCli(['--version'], { cwd: repo });
    expect(version.exitCode).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect((await runCli(['--help'], { cwd: repo })).exitCode).toBe(0);
  });
});
