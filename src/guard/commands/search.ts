import type { WordValue } from '../shell/words.js';
import { hasOption, optionValues, parseArgs } from './options.js';
import { unknownOption, use, type CommandEffects, type Known, type PathUse, type Unknown } from './types.js';

const GREP_VALUE = ['-e', '-f', '-m', '-A', '-B', '-C', '-d', '-D', '--regexp', '--file', '--max-count', '--after-context', '--before-context', '--context', '--include', '--exclude', '--exclude-dir', '--exclude-from', '--directories', '--devices', '--label', '--color', '--colour', '--binary-files', '--group-separator'];
const GREP_LONG = ['--extended-regexp', '--fixed-strings', '--basic-regexp', '--perl-regexp', '--ignore-case', '--no-ignore-case', '--word-regexp', '--line-regexp', '--null-data', '--no-messages', '--invert-match', '--byte-offset', '--line-number', '--no-line-number', '--line-buffered', '--with-filename', '--no-filename', '--only-matching', '--quiet', '--silent', '--text', '--recursive', '--dereference-recursive', '--files-without-match', '--files-with-matches', '--count', '--initial-tab', '--null', '--no-group-separator'];

export function grepEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: GREP_VALUE.filter((name) => name !== '--color' && name !== '--colour'), optional: ['--color', '--colour'], long: GREP_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
  const explicitPattern = hasOption(parsed, '-e', '-f', '--regexp', '--file');
  const files = explicitPattern ? parsed.operands : parsed.operands.slice(1);
  const recursive = name === 'rgrep' || hasOption(parsed, '-r', '-R', '--recursive', '--dereference-recursive') || optionValues(parsed, '-d', '--directories').some((v) => v.text === 'recurse');
  // --include and --exclude narrow which files a recursive search reads.
  const only = optionValues(parsed, '--include').map((v) => v.text);
  const except = optionValues(parsed, '--exclude', '--exclude-dir').map((v) => v.text);
  const extra = { ...(only.length > 0 ? { only } : {}), ...(except.length > 0 ? { except } : {}), ...(hasOption(parsed, '-R', '--dereference-recursive') ? { followsLinks: true } : {}) };
  const paths = files.map((value) => use(value, 'read', `${name} file`, recursive, extra));
  if (recursive && files.length === 0) paths.push(use({ text: '.', glob: null }, 'read', `${name} -r`, true, extra));
  paths.push(...optionValues(parsed, '-f', '--file', '--exclude-from').map((v) => use(v, 'read', `${name} -f`)));
  return known(paths);
}

const RG_VALUE = ['-e', '-f', '-g', '-m', '-A', '-B', '-C', '-t', '-T', '-j', '-M', '-E', '-r', '--regexp', '--file', '--glob', '--iglob', '--max-count', '--type', '--type-not', '--threads', '--max-columns', '--encoding', '--context', '--after-context', '--before-context', '--sort', '--sortr', '--max-depth', '--max-filesize', '--color', '--colors', '--path-separator', '--pre', '--pre-glob', '--type-add', '--type-clear', '--replace', '--ignore-file', '--context-separator', '--field-match-separator', '--field-context-separator', '--dfa-size-limit', '--regex-size-limit', '--engine'];
const RG_LONG = ['--case-sensitive', '--count', '--count-matches', '--column', '--no-column', '--files', '--files-with-matches', '--files-without-match', '--fixed-strings', '--follow', '--hidden', '--no-hidden', '--ignore-case', '--invert-match', '--json', '--line-number', '--no-line-number', '--multiline', '--multiline-dotall', '--no-heading', '--heading', '--no-ignore', '--no-ignore-vcs', '--no-ignore-dot', '--no-ignore-parent', '--no-ignore-global', '--no-ignore-exclude', '--no-ignore-files', '--null', '--null-data', '--only-matching', '--passthru', '--pretty', '--quiet', '--smart-case', '--stats', '--text', '--trim', '--type-list', '--unrestricted', '--vimgrep', '--word-regexp', '--with-filename', '--no-filename', '--line-regexp', '--no-messages', '--pcre2', '--crlf', '--no-unicode', '--max-columns-preview', '--byte-offset', '--block-buffered', '--line-buffered', '--one-file-system', '--sort-files', '--binary', '--no-config', '--debug', '--trace', '--search-zip', '--no-require-git', '--glob-case-insensitive', '--include-zero'];

/** Marks the origin of a search that skips hidden files, unless an ignore file whitelists one (judged in baseline.ts). */
export const HIDDEN_SKIPPED = ' (hidden files skipped)';

export function rgEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: RG_VALUE, long: RG_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption('rg', parsed.unknown[0]!));
  if (hasOption(parsed, '--pre', '-z', '--search-zip')) return unknown('`rg --pre` and `rg -z` run other programs');
  const listOnly = hasOption(parsed, '--files', '--type-list');
  const files = hasOption(parsed, '-e', '-f', '--regexp', '--file') || listOnly ? parsed.operands : parsed.operands.slice(1);
  // Globs and ignore files can whitelist hidden files; then hidden files count.
  const hidden = hasOption(parsed, '--hidden', '-.', '-u', '--unrestricted', '--no-ignore', '--no-ignore-dot', '--ignore-file', '--no-ignore-vcs', '--no-ignore-files') || optionValues(parsed, '-g', '--glob', '--iglob').length > 0;
  const origin = hidden ? 'rg search' : `rg search${HIDDEN_SKIPPED}`;
  const follow = hasOption(parsed, '-L', '--follow') ? { followsLinks: true } : {};
  const paths = (files.length === 0 ? [{ text: '.', glob: null } as WordValue] : files).map((value) => use(value, listOnly ? 'list' : 'read', origin, true, follow));
  paths.push(...optionValues(parsed, '-f', '--file', '--ignore-file').map((v) => use(v, 'read', 'rg -f')));
  return known(paths);
}

const FIND_VALUE = ['-name', '-iname', '-path', '-ipath', '-regex', '-iregex', '-type', '-xtype', '-maxdepth', '-mindepth', '-newer', '-perm', '-size', '-user', '-group', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-printf', '-wholename', '-iwholename', '-lname', '-ilname', '-links', '-inum', '-samefile', '-used', '-uid', '-gid', '-context', '-fstype', '-regextype', '-newermt', '-anewer', '-cnewer', '-newerat', '-newerct', '-newerma'];

export function findEffects(rest: WordValue[], known: Known): CommandEffects {
  const roots: WordValue[] = [];
  let i = 0;
  while (i < rest.length && /^-[HLP]$|^-O\d$|^-D$/.test(rest[i]!.text)) i += rest[i]!.text === '-D' ? 2 : 1;
  for (; i < rest.length; i++) {
    const text = rest[i]!.text;
    if (text.startsWith('-') || text === '(' || text === '!' || text === ')') break;
    roots.push(rest[i]!);
  }
  if (roots.length === 0) roots.push({ text: '.', glob: null });
  const expression = rest.slice(i);
  if (rest.some((arg) => arg.unknown !== undefined)) return { ...known([]), known: false, why: '`find` gets an argument not known before it runs, which may be an action' };
  const paths: PathUse[] = roots.map((root) => use(root, 'list', 'find root', true));
  let exec = false;
  const implied: string[][] = [];
  for (let j = 0; j < expression.length; j++) {
    const text = expression[j]!.text;
    if (text === '-delete') {
      paths.push(...roots.map((root) => use(root, 'write', 'find -delete', true)));
      implied.push(['rm', '-r', ...roots.map((root) => root.text)]);
    }
    if (/^-f(print0?|printf|ls)$/.test(text) && expression[j + 1]) paths.push(use(expression[j + 1]!, 'write', `find ${text}`));
    if (text === '-files0-from' && expression[j + 1]) paths.push(use(expression[j + 1]!, 'read', 'find -files0-from'));
    if (FIND_VALUE.includes(text) || text === '-files0-from') j += 1;
    if (/^-(exec|execdir|ok|okdir)$/.test(text)) exec = true;
  }
  return known(paths, { ...(exec ? { wrapper: true } : {}), ...(implied.length > 0 ? { implied } : {}) });
}
