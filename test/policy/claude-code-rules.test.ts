import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadClaudeCodeLayer } from '../../src/config/claude-code.js';
import { settingsFrom, settingsToolEnv } from '../../src/config/settings.js';
import type { CommandFact } from '../../src/guard/facts.js';
import { claudeCodeCommandMatches, claudeCodeSpecifier, pathMatcher } from '../../src/guard/rules/patterns.js';
import { UNKNOWN_ARG } from '../../src/guard/unknown-arg.js';

function command(...argv: string[]): CommandFact {
  return { name: path.basename(argv[0]!), argv, cwd: null, via: [], source: argv.join(' '), effects: {} as CommandFact['effects'], check: false, unknownArgs: argv.flatMap((a, i) => (a === UNKNOWN_ARG ? [i] : [])) };
}

describe("Claude Code's rule meaning", () => {
  const worktree = '/wt';
  const project = { kind: 'claude-code' as const, root: null };
  it('reads paths as gitignore patterns against the settings root, the working directory, home or /', () => {
    expect(claudeCodeSpecifier('/src/secret/**', '/home/u', worktree, project)).toBe('/wt/src/secret/**');
    expect(claudeCodeSpecifier('/notes/**', '/home/u', worktree, { kind: 'claude-code', root: '/home/u/.claude' })).toBe('/home/u/.claude/notes/**');
    expect(claudeCodeSpecifier('//etc/passwd', '/home/u', worktree, project)).toBe('/etc/passwd');
    expect(claudeCodeSpecifier('~/.aws/**', '/home/u', worktree, project)).toBe('/home/u/.aws/**');
    expect(claudeCodeSpecifier('./.env', '/home/u', worktree, project)).toBe('/wt/.env');
    expect(claudeCodeSpecifier('docs/*.md', '/home/u', worktree, project)).toBe('/wt/docs/*.md');
    const anyDepth = pathMatcher('*.pem', '/home/u', worktree, project);
    expect(anyDepth('/wt/a/b/key.pem')).toBe(true);
    expect(anyDepth('/elsewhere/key.pem')).toBe(false);
    const dir = pathMatcher('build/', '/home/u', worktree, project);
    expect(dir('/wt/pkg/build/out.js')).toBe(true);
  });

  it('matches Bash rules as Claude Code does: exact, prefix with a word boundary, and * spanning words', () => {
    const m = (spec: string, ...argv: string[]): boolean => claudeCodeCommandMatches(spec, command(...argv), false);
    expect(m('npm run test:*', 'npm', 'run', 'test')).toBe(true);
    expect(m('npm run test:*', 'npm', 'run', 'test', '--', '--watch')).toBe(true);
    expect(m('npm run test:*', 'npm', 'run', 'testing')).toBe(false);
    expect(m('npm run *', 'npm', 'run', 'build')).toBe(true);
    expect(m('npm run*', 'npm', 'run', 'build')).toBe(true);
    expect(m('ls *', 'lsof')).toBe(false);
    expect(m('ls *', 'ls')).toBe(true);
    expect(m('ls*', 'lsof')).toBe(true);
    expect(m('git * main', 'git', 'push', 'origin', 'main')).toBe(true);
    expect(m('* --version', '/usr/bin/node', '--version')).toBe(true);
    expect(m('npm test', 'npm', 'test', 'x')).toBe(false);
    // An argument known only when it runs: a deny rule cannot rule it out, an allow rule never covers it.
    expect(claudeCodeCommandMatches('rm -rf *', command('rm', UNKNOWN_ARG), true)).toBe(true);
    expect(claudeCodeCommandMatches('rm -rf *', command('rm', UNKNOWN_ARG), false)).toBe(false);
  });
});

describe("Claude Code's settings files", () => {
  it('keeps secret-named env values from tools unless the ticket passes them, and stacks local over project over user', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'corral-cc-'));
    try {
      await mkdir(path.join(dir, '.claude'));
      const load = async (scope: 'user' | 'project' | 'local', name: string, text: string) => {
        await writeFile(path.join(dir, '.claude', name), text);
        return (await loadClaudeCodeLayer(path.join(dir, '.claude', name), scope, name, dir)).layer!;
      };
      const user = await load('user', 'u.json', '{"env": {"A": "user", "NPM_TOKEN": "npm_abcdefgh", "HOME": "/", "GIT_DIR": "/x"}}');
      expect(user.ignored).toEqual(['env.HOME (corral sets it)', 'env.GIT_DIR (corral sets it)']);
      const project = await load('project', 'p.json', '{"env": {"A": "project"}}');
      const local = await load('local', 'l.json', '{"env": {"A": "local"}}');
      const settings = settingsFrom({ layers: [], files: [], claudeCode: { enabled: { value: true, from: 'default' }, files: [], layers: [user, project, local] } });
      expect(settingsToolEnv(settings, [])).toEqual({ A: 'local' });
      expect(settingsToolEnv(settings, ['NPM_TOKEN'])).toEqual({ A: 'local', NPM_TOKEN: 'npm_abcdefgh' });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says where a file is not JSON, and refuses a wrongly shaped known field', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'corral-cc-'));
    try {
      await writeFile(path.join(dir, 'bad.json'), '{\n  "permissions": {\n    "allow": ["Bash(ls)",]\n  }\n}\n');
      const bad = await loadClaudeCodeLayer(path.join(dir, 'bad.json'), 'project', 'bad.json', dir);
      expect(bad.problems[0]!.message).toMatch(/not valid JSON/);
      expect(bad.problems[0]!.line).toBe(3);
      await writeFile(path.join(dir, 'shape.json'), '{"permissions": {"deny": "Bash(rm:*)"}}');
      const shape = await loadClaudeCodeLayer(path.join(dir, 'shape.json'), 'project', 'shape.json', dir);
      expect(shape.problems[0]).toMatchObject({ field: 'permissions.deny', message: expect.stringMatching(/list of rules/) });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
