import picomatch from 'picomatch';

/**
 * A matcher for globs over file names as the file system has them (a name may hold any
 * byte but NUL and `/`). picomatch writes `**` with `.`, which a regular expression does
 * not let match a newline: `src/a\nb` would be judged outside `src/**`, and a secret under
 * a folder whose name holds a newline would not be judged a secret. The same expression
 * with the dotAll flag matches every character the glob means to match; `*` and `?` are
 * classes (`[^/]`) already and match a newline either way. Dot files match, as in a shell
 * with dotglob: a fence or a secret pattern means them too.
 */
export function pathGlob(globs: string | readonly string[], options: { basename?: boolean } = {}): (file: string) => boolean {
  const expressions = (typeof globs === 'string' ? [globs] : [...globs]).map((glob) => {
    const expression = picomatch.makeRe(glob, { dot: true, ...(options.basename ? { basename: true } : {}) });
    return new RegExp(expression.source, `${expression.flags.replace('s', '')}s`);
  });
  return (file) => expressions.some((expression) => expression.test(file));
}
