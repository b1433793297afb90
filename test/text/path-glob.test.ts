import { describe, expect, it } from 'vitest';
import { isSecret } from '../../src/policy/protected-paths.js';
import { pathGlob } from '../../src/text/path-glob.js';

describe('globs over names as the file system has them', () => {
  it('lets ** cross a name that holds a newline, as * and ? already do', () => {
    expect(pathGlob('src/**')('src/a\nb/c.txt')).toBe(true);
    expect(pathGlob('src/*')('src/a\nb.txt')).toBe(true);
    expect(pathGlob('src/**')('lib/a\nb.txt')).toBe(false);
    expect(pathGlob(['lib/**', '**/deep/**'])('x/y\nz/deep/f')).toBe(true);
  });

  it('still judges a secret a secret under a folder whose name holds a newline', () => {
    expect(isSecret('/w/odd\nname/.env')).toBe(true);
    expect(isSecret('/w/odd\nname/.env.example')).toBe(false);
    expect(isSecret('/w/odd\nname/notes.txt')).toBe(false);
  });
});
