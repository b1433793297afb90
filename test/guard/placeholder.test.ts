import { mkdirSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decideCall, refusalText } from '../../src/guard/decide.js';
import { resolveRealPath } from '../../src/guard/resolve-paths.js';
import { tempDir } from '../support/repo.js';

describe('the placeholder path check', () => {
  it('refuses file-tool paths that resolve outside the worktree, through .. and symlinks', async () => {
    const root = tempDir('corral-guard-');
    const worktree = path.join(root, 'wt');
    mkdirSync(path.join(worktree, 'src'), { recursive: true });
    symlinkSync('/etc', path.join(worktree, 'src', 'escape'));
    const decide = async (given: string) =>
      decideCall({ tool: 'Read', resolvedPaths: [await resolveRealPath(given, worktree)] }, worktree).effect;
    expect(await decide('src/new-file.ts')).toBe('allow');
    expect(await decide(path.join(worktree, 'src'))).toBe('allow');
    expect(await decide('../outside.txt')).toBe('deny');
    expect(await decide('src/../../outside.txt')).toBe('deny');
    expect(await decide('/etc/passwd')).toBe('deny');
    expect(await decide('src/escape/passwd')).toBe('deny');
    expect(await decide('src/escape/not-yet/deeper')).toBe('deny');
    expect(await decide('.git/config')).toBe('deny');
    // A dangling symlink leads where a Write through it would create the file.
    symlinkSync(path.join(root, 'elsewhere', 'new.txt'), path.join(worktree, 'dangling.txt'));
    expect(await decide('dangling.txt')).toBe('deny');
    symlinkSync('dangling.txt', path.join(worktree, 'hop.txt'));
    expect(await decide('hop.txt')).toBe('deny');
    symlinkSync('inside-target.txt', path.join(worktree, 'dangling-inside.txt'));
    expect(await decide('dangling-inside.txt')).toBe('allow');
    symlinkSync('loop-b', path.join(worktree, 'loop-a'));
    symlinkSync('loop-a', path.join(worktree, 'loop-b'));
    await expect(resolveRealPath('loop-a', worktree)).rejects.toThrow();
  });

  it('tells the model it is a rule, not a glitch, and not to retry', () => {
    const text = refusalText({ effect: 'deny', rule: 'r1', reason: 'because' });
    expect(text).toContain('Rule: r1');
    expect(text).toContain('not a glitch');
    expect(text).toContain('do not retry');
  });
});
