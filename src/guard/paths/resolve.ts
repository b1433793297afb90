import { lstatSync, readdirSync, readlinkSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { PROTECTED_PROBES } from '../../policy/protected-paths.js';

const MAX_LINK_HOPS = 40;
const MAX_GLOB_MATCHES = 2_000;
// Folders one glob may read before the guard stops looking: a glob of three `*` levels
// and a last part that matches nothing would otherwise read every folder three levels
// down (from `/`, all of /proc's), seconds of one decision. A glob cut short is judged as
// touching what cannot be checked, so the decision fails closed. The limit is far above
// what an agent's globs read in a large repository (`packages/*/src/*.ts`: a folder per
// package and one more each).
const MAX_GLOB_FOLDERS = 10_000;

/**
 * Resolves a path the way the kernel will when a command opens it: segment by segment
 * from `cwd`, each symlink followed (a dangling one too: a write through it creates the
 * target), and `..` taken after the symlink before it, as the kernel does. The part
 * that does not exist is appended as written. Throws on a link loop or a path it is
 * not allowed to look at, so the caller can refuse rather than guess.
 */
export function resolvePhysical(given: string, cwd: string): string {
  // No lexical clean-up first: `link/..` is the parent of the link's target, as for the kernel.
  const absolute = path.isAbsolute(given) ? given : `${cwd}/${given}`;
  const standard = standardStream(absolute);
  if (standard !== null) return standard;
  return walk('/', absolute.split('/').filter((part) => part !== '' && part !== '.'), 0);
}

/** The path of an entry itself when it is a symlink (`rm link` removes the link): its directory resolved, its name kept. */
export function resolveLinkItself(given: string, cwd: string): string {
  const absolute = path.isAbsolute(given) ? given : `${cwd}/${given}`;
  const trimmed = absolute.replace(/\/+$/, '');
  const name = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  if (name === '' || name === '.' || name === '..') return resolvePhysical(given, cwd);
  return path.join(resolvePhysical(trimmed.slice(0, trimmed.lastIndexOf('/')) || '/', '/'), name);
}

/**
 * /dev/stdout and friends point at whatever corral's own streams are; for the command
 * they are its own output, never a file of corral's, so they are not followed.
 */
function standardStream(absolute: string): string | null {
  const normal = path.normalize(absolute);
  if (/^\/dev\/(stdin|stdout|stderr|fd\/\d+)$/.test(normal) || /^\/proc\/self\/fd\/\d+$/.test(normal)) return normal;
  return null;
}

function walk(start: string, parts: string[], hops: number): string {
  let current = start;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (part === '..') {
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, part);
    let link: string | null = null;
    try {
      if (lstatSync(next).isSymbolicLink()) link = readlinkSync(next);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return path.join(next, ...parts.slice(i + 1));
      throw error;
    }
    if (link === null) {
      current = next;
      continue;
    }
    if (hops >= MAX_LINK_HOPS) throw new Error(`too many levels of symbolic links at ${next}`);
    const target = path.isAbsolute(link) ? link : `${current}/${link}`;
    current = walk('/', target.split('/').filter((p) => p !== '' && p !== '.'), hops + 1);
  }
  return current;
}

/**
 * What a glob can touch: the files it matches now (bash's expansion: `*` skips dot
 * files, no `**`), the pattern itself (bash passes it on when nothing matches), and
 * each protected name it could match once that file exists. `truncated` says why the
 * expansion stopped short (too many matches, too many folders to read), or is null.
 */
export function globCandidates(pattern: string, cwd: string): { paths: string[]; truncated: string | null; base: string } {
  // A quoted slash is a slash (`"$HOME"/.ss?` and `~/.ss?` arrive as `\/\r\o\o\t/.ss?`):
  // without this the pattern would not look absolute and would be expanded under cwd.
  const plain = slashesUnescaped(pattern);
  const absolute = plain.startsWith('/') ? plain : `${cwd}/${plain}`;
  const matches: string[] = [];
  const parts = absolute.split('/').filter((part) => part !== '');
  const truncated = expand('/', parts, matches, { folders: MAX_GLOB_FOLDERS });
  const firstGlob = parts.findIndex(hasGlob);
  const fixed = parts.slice(0, firstGlob === -1 ? parts.length - 1 : firstGlob);
  const base = `/${fixed.map(unescape).join('/')}`;
  // `.aw*/` matches the folder `.aws`: a trailing slash only says it must be a folder.
  const matcher = picomatch(bashGlob(needfulEscapes(absolute.replace(/\/+$/, '') || '/')), { dot: false });
  for (const probe of PROTECTED_PROBES) {
    const candidate = path.join(base, probe);
    if (matcher(candidate)) matches.push(candidate);
  }
  matches.push(unescape(absolute));
  return { paths: [...new Set(matches)], truncated, base };
}

/** Expands `parts` under `dir` into `out`; returns why it stopped short, or null. */
function expand(dir: string, parts: string[], out: string[], budget: { folders: number }): string | null {
  if (parts.length === 0) {
    out.push(dir);
    return out.length >= MAX_GLOB_MATCHES ? 'the glob matches too many files to check each' : null;
  }
  const [part, ...rest] = parts as [string, ...string[]];
  // No lexical clean-up: `link/..` must reach the kernel as written.
  if (!hasGlob(part)) return expand(dir === '/' ? `/${unescape(part)}` : `${dir}/${unescape(part)}`, rest, out, budget);
  if (budget.folders-- <= 0) return 'the glob reaches too many folders to check each';
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return null;
  }
  const matches = picomatch(bashGlob(part), { dot: false });
  for (const name of names.sort()) {
    if (!matches(name)) continue;
    const stopped = expand(dir === '/' ? `/${name}` : `${dir}/${name}`, rest, out, budget);
    if (stopped !== null) return stopped;
  }
  return null;
}

/**
 * picomatch and bash disagree on bracket expressions (`[!x]`, `[[=e=]]`, `[\e]`), so
 * each is taken as any one character: a glob then matches at least what bash matches.
 */
function bashGlob(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    const char = pattern[i]!;
    if (char === '\\') {
      out += pattern.slice(i, i + 2);
      i += 1;
      continue;
    }
    if (char === '[') {
      const end = bracketEnd(pattern, i);
      if (end !== -1) {
        out += '?';
        i = end;
        continue;
      }
    }
    out += char;
  }
  return out;
}

/** Where the bracket expression starting at `start` ends (its `]`), or -1 when it does not close. */
function bracketEnd(pattern: string, start: number): number {
  let i = start + 1;
  if (pattern[i] === '!' || pattern[i] === '^') i += 1;
  if (pattern[i] === ']') i += 1;
  for (; i < pattern.length; i++) {
    if (pattern[i] === '[' && /[:.=]/.test(pattern[i + 1] ?? '')) {
      const close = pattern.indexOf(`${pattern[i + 1]}]`, i + 2);
      if (close === -1) return -1;
      i = close + 1;
      continue;
    }
    if (pattern[i] === '\\') {
      i += 1;
      continue;
    }
    if (pattern[i] === ']') return i;
  }
  return -1;
}

/** picomatch reads `\r` as something else than `r`: only characters it treats specially keep their backslash. */
function needfulEscapes(pattern: string): string {
  return pattern.replace(/\\([\s\S])/g, (escaped, char: string) => (/[\\*?[\]{}()!+@|^$]/.test(char) ? escaped : char));
}

/** The pattern with each backslash-escaped `/` written as a plain one (an escaped backslash is kept). */
function slashesUnescaped(pattern: string): string {
  let out = '';
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] === '\\' && i + 1 < pattern.length) {
      out += pattern[i + 1] === '/' ? '/' : pattern.slice(i, i + 2);
      i += 1;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

function hasGlob(part: string): boolean {
  for (let i = 0; i < part.length; i++) {
    if (part[i] === '\\') i += 1;
    else if (part[i] === '*' || part[i] === '?' || part[i] === '[') return true;
  }
  return false;
}

function unescape(text: string): string {
  return text.replace(/\\(.)/gs, '$1');
}
