import { describe, expect, it } from 'vitest';
import { findGlobProblem } from '../../src/ticket/glob-problem.js';

describe('findGlobProblem', () => {
  it.each(['src/**', '*.md', 'src/**/*.{ts,tsx}', 'docs/[a-z]*.md', '[]]x', '@(a|b)/**', '.github/**', 'a/.env*'])(
    'accepts %s',
    (glob) => {
      expect(findGlobProblem(glob)).toBeNull();
    },
  );

  it.each([
    ['', 'glob is empty'],
    ['   ', 'glob is empty'],
    ['/abs/**', 'glob `/abs/**` is absolute'],
    ['src/../x', 'glob `src/../x` has a `..` segment'],
    ['..', 'glob `..` has a `..` segment'],
    ['./src/**', 'glob `./src/**` has a `.` segment'],
    ['src\\x', 'glob `src\\x` contains a backslash'],
    ['src/[ab', 'glob `src/[ab` has a `[` that is not closed (character 5)'],
    ['src/]', 'glob `src/]` has a `]` without `[` at character 5'],
    ['{a,{b,c}', 'glob `{a,{b,c}` has a `{` that is not closed'],
    ['a}', 'glob `a}` has a `}` without `{` at character 2'],
    ['!(a', 'glob `!(a` is not a valid pattern: Missing closing: ")"'],
    // POSIX takes `]` right after `[!` as a member; picomatch does not, so it is rejected.
    ['[!]]x', 'glob `[!]]x` is not a valid pattern: Missing opening: "["'],
  ])('rejects %j', (glob, message) => {
    const problem = findGlobProblem(glob);
    expect(problem?.message).toBe(message);
    expect(problem?.hint).toBeTruthy();
  });

  it('allows `..` inside a name, which is not a segment', () => {
    expect(findGlobProblem('a..b/c')).toBeNull();
  });
});
