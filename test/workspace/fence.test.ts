import { describe, expect, it } from 'vitest';
import { parseRawDiff } from '../../src/workspace/changes.js';
import { checkFence } from '../../src/workspace/fence.js';

describe('checkFence', () => {
  it('allows paths matching allow, forbid beats allow, dotfiles match', () => {
    const result = checkFence(
      [
        { kind: 'modified', path: 'src/a.ts' },
        { kind: 'added', path: 'src/.env' },
        { kind: 'modified', path: 'src/gen/x.ts' },
        { kind: 'modified', path: 'README.md' },
      ],
      ['src/**'],
      ['src/gen/**'],
    );
    expect(result.ok).toBe(false);
    expect(result.verdicts.map((v) => [v.change.path, v.allowed, v.reason])).toEqual([
      ['src/a.ts', true, undefined],
      ['src/.env', true, undefined],
      ['src/gen/x.ts', false, 'matches forbid src/gen/**'],
      ['README.md', false, 'matches no allow glob'],
    ]);
  });

  it('judges both ends of a rename', () => {
    const out = checkFence([{ kind: 'renamed', path: 'src/b.ts', from: 'lib/a.ts' }], ['src/**'], []);
    expect(out.ok).toBe(false);
    expect(out.verdicts[0]!.reason).toBe('matches no allow glob');
  });

  it('holds with no changes', () => {
    expect(checkFence([], ['**'], [])).toEqual({ ok: true, verdicts: [] });
  });
});

describe('parseRawDiff', () => {
  it('reads renames, mode and type changes from -z output', () => {
    const raw = [
      ':100644 100644 aaa bbb M', 'a.txt',
      ':100644 100755 ccc ccc M', 'run.sh',
      ':100644 100644 ddd ddd R100', 'old name.txt', 'new name.txt',
      ':100644 120000 eee fff T', 'link',
      ':000000 100644 000 ggg A', 'new.txt',
      '',
    ].join('\0');
    expect(parseRawDiff(raw)).toEqual([
      { kind: 'modified', path: 'a.txt' },
      { kind: 'mode', path: 'run.sh' },
      { kind: 'renamed', path: 'new name.txt', from: 'old name.txt' },
      { kind: 'type', path: 'link' },
      { kind: 'added', path: 'new.txt' },
    ]);
  });
});
