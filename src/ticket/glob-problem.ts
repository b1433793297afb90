import picomatch from 'picomatch';

export interface GlobProblem {
  message: string;
  hint: string;
}

/**
 * What is wrong with a fence glob (`allow`/`forbid`), or null when it is usable.
 * Globs are matched against repository-relative paths with `/` separators, so a glob
 * that could never match such a path is rejected here: a `forbid` that silently
 * matches nothing would loosen the fence.
 */
export function findGlobProblem(glob: string): GlobProblem | null {
  if (glob.trim() === '') {
    return { message: 'glob is empty', hint: 'write a path pattern such as `src/**`' };
  }
  if (glob.includes('\\')) {
    return {
      message: `glob \`${glob}\` contains a backslash`,
      hint: 'separate directories with `/`; backslash escapes are not supported',
    };
  }
  if (glob.startsWith('/')) {
    return {
      message: `glob \`${glob}\` is absolute`,
      hint: `globs are relative to the repository root: write \`${glob.replace(/^\/+/, '')}\``,
    };
  }
  const segments = glob.split('/');
  if (segments.includes('..')) {
    return {
      message: `glob \`${glob}\` has a \`..\` segment`,
      hint: 'globs cannot reach outside the repository; write the path from the repository root',
    };
  }
  if (segments.includes('.')) {
    return {
      message: `glob \`${glob}\` has a \`.\` segment`,
      hint: `paths are matched without \`./\`: write \`${segments.filter((s) => s !== '.').join('/')}\``,
    };
  }
  const bracketProblem = findUnbalancedBracket(glob);
  if (bracketProblem) return { message: `glob \`${glob}\` ${bracketProblem}`, hint: 'balance `[...]` and `{...}`' };
  try {
    picomatch.makeRe(glob, { strictBrackets: true });
  } catch (error) {
    // picomatch's own advice is to escape with a backslash, which we reject above.
    const reason = (error instanceof Error ? error.message : String(error)).split(' - ')[0];
    return {
      message: `glob \`${glob}\` is not a valid pattern: ${reason}`,
      hint: 'check that `[...]`, `{...}` and `(...)` are balanced',
    };
  }
  return null;
}

/** Describes the first unbalanced `[]` or `{}` in a glob (no escapes: backslashes are rejected earlier). */
function findUnbalancedBracket(glob: string): string | null {
  let braceDepth = 0;
  let classStart = -1;
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i];
    if (classStart >= 0) {
      // Inside a character class everything is literal until `]`; a `]` right after
      // `[`, `[!` or `[^` is itself a member of the class.
      const first = classStart + 1 + (glob[classStart + 1] === '!' || glob[classStart + 1] === '^' ? 1 : 0);
      if (char === ']' && i > first) classStart = -1;
      continue;
    }
    if (char === '[') classStart = i;
    else if (char === ']') return `has a \`]\` without \`[\` at character ${i + 1}`;
    else if (char === '{') braceDepth++;
    else if (char === '}') {
      if (braceDepth === 0) return `has a \`}\` without \`{\` at character ${i + 1}`;
      braceDepth--;
    }
  }
  if (classStart >= 0) return `has a \`[\` that is not closed (character ${classStart + 1})`;
  if (braceDepth > 0) return 'has a `{` that is not closed';
  return null;
}
