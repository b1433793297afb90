import type { FenceVerdict } from '../trace/records.js';
import picomatch from 'picomatch';
import type { Change } from '../trace/records.js';


export interface FenceResult {
  ok: boolean;
  verdicts: FenceVerdict[];
}

/**
 * A matcher for one glob over repository paths as git lists them (with -z, so a name may
 * hold any byte but NUL). picomatch writes `**` with `.`, which a regular expression does
 * not let match a newline: `src/a\nb` would be judged outside `src/**`. The same
 * expression with the dotAll flag matches every character the glob means to match; `*`
 * and `?` are classes (`[^/]`) already and match a newline either way.
 */
function pathMatcher(glob: string): (file: string) => boolean {
  const expression = picomatch.makeRe(glob, { dot: true });
  const anyCharacter = new RegExp(expression.source, `${expression.flags.replace('s', '')}s`);
  return (file) => anyCharacter.test(file);
}

/** Checks every changed path against the ticket's globs; `forbid` beats `allow`. Pure. */
export function checkFence(changes: Change[], allow: string[], forbid: string[]): FenceResult {
  const allowMatchers = allow.map((glob) => ({ glob, match: pathMatcher(glob) }));
  const forbidMatchers = forbid.map((glob) => ({ glob, match: pathMatcher(glob) }));
  const judge = (file: string): string | undefined => {
    const forbidden = forbidMatchers.find((m) => m.match(file));
    if (forbidden) return `matches forbid ${forbidden.glob}`;
    if (!allowMatchers.some((m) => m.match(file))) return 'matches no allow glob';
    return undefined;
  };
  const verdicts = changes.map((change): FenceVerdict => {
    // A rename deletes its old path, so both ends must be allowed.
    const reason = judge(change.path) ?? (change.from === undefined ? undefined : judge(change.from));
    return reason === undefined ? { change, allowed: true } : { change, allowed: false, reason };
  });
  return { ok: verdicts.every((v) => v.allowed), verdicts };
}
