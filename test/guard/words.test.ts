import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSecret } from '../../src/policy/protected-paths.js';
import { globCandidates, resolvePhysical } from '../../src/guard/paths/resolve.js';
import { expandBraces } from '../../src/guard/shell/braces.js';
import { decodeAnsiC } from '../../src/guard/shell/words.js';
import { tempDir } from '../support/repo.js';

const MAX = 64;

describe('expandBraces', () => {
  it('expands alternatives with their prefix and suffix', () => {
    expect(expandBraces('a{b,c}d', MAX)).toEqual(['abd', 'acd']);
    expect(expandBraces('.env{,.bak}', MAX)).toEqual(['.env', '.env.bak']);
  });

  it('expands nested and successive groups in bash order', () => {
    expect(expandBraces('{a,{b,c}}x', MAX)).toEqual(['ax', 'bx', 'cx']);
    expect(expandBraces('{a,b}{1,2}', MAX)).toEqual(['a1', 'a2', 'b1', 'b2']);
  });

  it('expands numeric and letter ranges, either way and with a step', () => {
    expect(expandBraces('{1..3}', MAX)).toEqual(['1', '2', '3']);
    expect(expandBraces('f{3..1}', MAX)).toEqual(['f3', 'f2', 'f1']);
    expect(expandBraces('{1..10..3}', MAX)).toEqual(['1', '4', '7', '10']);
    expect(expandBraces('{a..c}', MAX)).toEqual(['a', 'b', 'c']);
  });

  it('leaves escaped braces literal', () => {
    expect(expandBraces('\\{a,b\\}', MAX)).toEqual(['\\{a,b\\}']);
    expect(expandBraces('{a\\,b}', MAX)).toEqual(['{a\\,b}']);
  });

  it('leaves a brace without a comma or a range literal', () => {
    expect(expandBraces('{a}', MAX)).toEqual(['{a}']);
    expect(expandBraces('{a..}', MAX)).toEqual(['{a..}']);
    expect(expandBraces('{a,b', MAX)).toEqual(['{a,b']);
  });

  it('expands a later group after a literal one, as bash does', () => {
    expect(expandBraces('{a}{b,c}', MAX)).toEqual(['{a}b', '{a}c']);
  });

  it('stops at the bound', () => {
    expect(expandBraces('{1..100}', 5)).toHaveLength(5);
  });
});

describe('decodeAnsiC', () => {
  it('decodes hex escapes of one or two digits', () => {
    expect(decodeAnsiC('\\x63at')).toBe('cat');
    expect(decodeAnsiC('\\x2eenv')).toBe('.env');
    expect(decodeAnsiC('\\x9z')).toBe('\tz');
  });

  it('decodes octal escapes of up to three digits', () => {
    expect(decodeAnsiC('\\056env')).toBe('.env');
    expect(decodeAnsiC('\\101\\0')).toBe('A\u0000');
  });

  it('decodes \\u and \\U escapes', () => {
    expect(decodeAnsiC('\\u00e9')).toBe('é');
    expect(decodeAnsiC('\\U0001F600')).toBe('😀');
  });

  it('decodes \\c as a control character', () => {
    expect(decodeAnsiC('\\cA')).toBe('\u0001');
    expect(decodeAnsiC('\\ca')).toBe('\u0001');
  });

  it('decodes the simple escapes and keeps unknown ones as written', () => {
    expect(decodeAnsiC('a\\tb\\nc\\\\d\\\'e')).toBe("a\tb\nc\\d'e");
    expect(decodeAnsiC('\\z')).toBe('\\z');
    expect(decodeAnsiC('\\x')).toBe('\\x');
  });
});

describe('resolvePhysical', () => {
  it('follows a symlink to where it points', () => {
    const dir = tempDir();
    symlinkSync('/etc', path.join(dir, 'out'));
    expect(resolvePhysical('out/passwd', dir)).toBe('/etc/passwd');
  });

  it('takes `..` after a symlink from the link target, as the kernel does', () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'real/deep'), { recursive: true });
    symlinkSync(path.join(dir, 'real/deep'), path.join(dir, 'link'));
    // Built by hand: path.join would fold the `..` before the resolver sees it.
    expect(resolvePhysical(`${dir}/link/../file`, '/')).toBe(path.join(dir, 'real/file'));
    expect(resolvePhysical(`${dir}/link/../../x`, '/')).toBe(path.join(dir, 'x'));
    expect(resolvePhysical(`${dir}/link/..`, '/')).toBe(path.join(dir, 'real'));
  });

  it('follows a relative symlink from its own directory', () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'a/b'), { recursive: true });
    symlinkSync('../c', path.join(dir, 'a/b/up'));
    expect(resolvePhysical('a/b/up/f', dir)).toBe(path.join(dir, 'a/c/f'));
  });

  it('follows a dangling symlink, since a write through it creates the target', () => {
    const dir = tempDir();
    symlinkSync(path.join(dir, 'nowhere/file'), path.join(dir, 'dangling'));
    expect(resolvePhysical('dangling', dir)).toBe(path.join(dir, 'nowhere/file'));
  });

  it('appends the part that does not exist as written', () => {
    const dir = tempDir();
    expect(resolvePhysical('new/dir/file.js', dir)).toBe(path.join(dir, 'new/dir/file.js'));
  });

  it('throws on a symlink loop', () => {
    const dir = tempDir();
    symlinkSync('loop2', path.join(dir, 'loop1'));
    symlinkSync('loop1', path.join(dir, 'loop2'));
    expect(() => resolvePhysical('loop1/x', dir)).toThrow(/too many levels of symbolic links/);
  });
});

describe('globCandidates', () => {
  it('matches a dot file with a pattern that starts with a dot', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, '.env'), 'x');
    expect(globCandidates('.en?', dir).paths).toContain(path.join(dir, '.env'));
  });

  it('does not let `*` match dot files', () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, '.env'), 'x');
    writeFileSync(path.join(dir, 'a.js'), 'x');
    const { paths } = globCandidates('*', dir);
    expect(paths).toContain(path.join(dir, 'a.js'));
    expect(paths).not.toContain(path.join(dir, '.env'));
  });

  it('yields the literal pattern and the protected names it could match when nothing matches', () => {
    const dir = tempDir();
    const { paths, truncated } = globCandidates('.g*/config', dir);
    expect(paths).toContain(path.join(dir, '.git/config'));
    expect(paths).toContain(path.join(dir, '.g*/config'));
    expect(truncated).toBeNull();
  });

  it('yields the secrets a pattern could match before they exist', () => {
    const dir = tempDir();
    expect(globCandidates('.e*', dir).paths).toEqual(expect.arrayContaining([path.join(dir, '.env'), path.join(dir, '.env.local')]));
    expect(globCandidates('nothing*', dir).paths).toEqual([path.join(dir, 'nothing*')]);
  });

  it('stops reading folders for a deep glob that matches nothing, and says so', () => {
    const dir = tempDir();
    // More folders than one glob may read (10,000), none holding what it looks for.
    for (let i = 0; i < 10_050; i++) mkdirSync(path.join(dir, `d${i}`));
    const deep = globCandidates('d*/*/x*', dir);
    expect(deep.truncated).toBe('the glob reaches too many folders to check each');
    // The same tree with a glob that reads one folder per level is not cut short.
    expect(globCandidates('d1/*/x*', dir).truncated).toBeNull();
    expect(globCandidates('d*', dir).paths.length).toBeGreaterThan(2);
  });

  it('matches across directories segment by segment', () => {
    const dir = tempDir();
    mkdirSync(path.join(dir, 'src/lib'), { recursive: true });
    writeFileSync(path.join(dir, 'src/lib/a.js'), 'x');
    expect(globCandidates('s*/*/a.js', dir).paths).toContain(path.join(dir, 'src/lib/a.js'));
  });
});

describe('isSecret', () => {
  it.each(['/repo/.env', '/repo/.env.local', '/repo/sub/.env', '/home/me/.ssh/id_rsa', '/repo/id_rsa', '/home/me/.aws/credentials', '/proc/1/environ', '/repo/keys/deploy.pem', '/home/me/.netrc'])('counts %s as a secret', (file) => {
    expect(isSecret(file)).toBe(true);
  });

  it.each(['/repo/.env.example', '/repo/.env.sample', '/home/me/.ssh/id_rsa.pub', '/repo/src/env.js', '/repo/README.md'])('does not count %s as a secret', (file) => {
    expect(isSecret(file)).toBe(false);
  });
});

describe('decodeAnsiC control characters', () => {
  it('reads \\c? as DEL, as bash does', () => {
    expect(decodeAnsiC('\\c?')).toBe('\x7f');
  });
});

describe('resolvePhysical with relative paths', () => {
  it('follows a symlink before the `..` after it, from the directory given', () => {
    const dir = tempDir('corral-resolve-rel-');
    mkdirSync(path.join(dir, 'real/deep'), { recursive: true });
    symlinkSync(path.join(dir, 'real/deep'), path.join(dir, 'link'));
    expect(resolvePhysical('link/../x', dir)).toBe(path.join(dir, 'real/x'));
  });
});

describe('globCandidates after a tilde or a quoted directory', () => {
  // The words arrive with the expanded directory quoted: `~/.ss?` is `\/\h\o\m\e/.ss?`.
  const quoted = (dir: string): string => dir.replace(/[\s\S]/g, (char) => `\\${char}`);

  it('expands the glob in that directory, not under the working directory', () => {
    const home = tempDir();
    mkdirSync(path.join(home, '.ssh'));
    writeFileSync(path.join(home, '.ssh/id_ed25519'), 'x');
    const cwd = tempDir();
    const { paths, base } = globCandidates(`${quoted(home)}/.ss?/id_*`, cwd);
    expect(paths).toContain(path.join(home, '.ssh/id_ed25519'));
    expect(paths.every((candidate) => candidate.startsWith(home))).toBe(true);
    expect(base).toBe(home);
  });

  it('tries the secret names a pattern in another directory could match before they exist', () => {
    const home = tempDir();
    expect(globCandidates(`${quoted(home)}/.ss?/id_*`, tempDir()).paths).toContain(path.join(home, '.ssh/id_rsa'));
    expect(globCandidates(`${quoted(home)}/.aw*/`, tempDir()).paths.filter(isSecret)).toContain(path.join(home, '.aws'));
  });

  it('keeps an escaped backslash before a slash as a backslash', () => {
    const dir = tempDir();
    expect(globCandidates('a\\\\/*', dir).base).toBe(path.join(dir, 'a\\'));
  });
});
