import type { FenceVerdict } from '../trace/records.js';
import { pathGlob as pathMatcher } from '../text/path-glob.js';
import type { Change } from '../trace/records.js';

export interface FenceResult {
  ok: boolean;
  verdicts: FenceVerdict[];
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

/**
 * The fence with the files written inside a submodule's path added: judged by the globs
 * like any path, and outside the fence whatever they say when no glob allows them, with a
 * reason that says why a patch cannot carry them.
 */
export function fenceWithSubmoduleWrites(fence: FenceResult, writes: { submodule: string; change: Change }[], allow: string[], forbid: string[]): FenceResult {
  if (writes.length === 0) return fence;
  const judged = checkFence(writes.map((write) => write.change), allow, forbid).verdicts.map((verdict, i): FenceVerdict => {
    const where = `inside submodule ${writes[i]!.submodule}, which neither the patch nor the result commit can carry`;
    return verdict.allowed ? verdict : { ...verdict, reason: `${where}; ${verdict.reason ?? ''}`.replace(/; $/, '') };
  });
  const verdicts = [...fence.verdicts, ...judged];
  return { ok: verdicts.every((v) => v.allowed), verdicts };
}
