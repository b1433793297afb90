import type { SimpleCommand } from '../shell/analyse.js';
import { baseName } from '../shell/wrappers.js';
import type { WordValue } from '../shell/words.js';
import { gitEffects } from './git.js';
import { hasOption, optionValues, parseArgs, type ParsedArgs } from './options.js';

/** How a command uses a path: reads its content, writes or deletes it, lists names, or runs it. */
export type Access = 'read' | 'write' | 'list' | 'exec';

export interface PathUse {
  value: WordValue;
  access: Access;
  /** A directory taken whole: everything under it is read or written. */
  recursive: boolean;
  /** Where the path came from, for people: `cat argument`, `redirect >`. */
  origin: string;
}

/** A baseline hard limit one command breaks on its own. */
export interface Hazard {
  rule: string;
  reason: string;
}

export interface CommandEffects {
  name: string;
  /** Known to do nothing but read, list and write the paths listed. */
  known: boolean;
  /** Runs other commands that are judged on their own (`timeout`, `bash -c`, `xargs`). */
  wrapper: boolean;
  paths: PathUse[];
  hazards: Hazard[];
  /** Fetches from the network / runs code it is given: together they are a download run unseen. */
  role?: 'downloader' | 'interpreter';
  /** Why the command is not known to be safe. */
  why?: string;
  /** Commands it amounts to, judged by rules too: `find -delete` is an `rm`. */
  implied?: string[][];
}

const WRAPPERS = new Set(['env', 'command', 'builtin', 'exec', 'nice', 'ionice', 'nohup', 'timeout', 'time', 'stdbuf', 'setsid', 'watch', 'xargs', 'coproc']);
const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'fish', 'csh', 'tcsh']);
const INTERPRETERS = new Set([...SHELLS, 'python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'Rscript', 'tclsh', 'osascript', 'pwsh', 'source', '.']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'nc', 'ncat', 'netcat', 'socat', 'lynx', 'links']);
const PRIVILEGE = new Set(['sudo', 'doas', 'su', 'pkexec', 'runuser', 'chroot', 'setcap', 'setpriv', 'unshare', 'nsenter', 'capsh']);
const DEVICE_TOOLS = new Set(['mkfs', 'fdisk', 'sfdisk', 'parted', 'wipefs', 'mkswap', 'swapon', 'losetup', 'mount', 'umount', 'blkdiscard', 'hdparm']);
const BROAD_KILLERS = new Set(['killall', 'pkill', 'killall5', 'skill', 'slay']);
const HARMLESS_GIT_ENV = /^GIT_(AUTHOR|COMMITTER)_(NAME|EMAIL|DATE)$|^GIT_TERMINAL_PROMPT$/;

/** Commands that print or compute without touching files named by their arguments. */
const NO_FILE_ARGS = new Set([
  'echo', 'printf', 'true', 'false', ':', 'test', '[', '[[', 'pwd', 'seq', 'expr', 'sleep', 'id', 'whoami', 'uname',
  'date', 'printenv', 'basename', 'dirname', 'which', 'type', 'hash', 'cd', 'pushd', 'popd', 'dirs', 'set', 'export',
  'wait', 'exit', 'return', 'shift', 'break', 'continue', 'local', 'declare', 'typeset', 'readonly', 'read', 'getopts',
  'mapfile', 'readarray', 'unset', 'tr', 'yes', 'nproc', 'arch', 'tty', 'locale', 'groups', 'logname', 'factor', 'numfmt',
]);

/** Commands that read the content of every operand. */
const READERS = new Set([
  'cat', 'tac', 'nl', 'head', 'tail', 'wc', 'less', 'more', 'cut', 'paste', 'join', 'comm', 'fold', 'column', 'expand',
  'unexpand', 'fmt', 'rev', 'od', 'hexdump', 'hd', 'strings', 'md5sum', 'sha1sum', 'sha224sum', 'sha256sum', 'sha384sum',
  'sha512sum', 'b2sum', 'cksum', 'sum', 'base64', 'base32', 'cmp', 'iconv', 'look', 'tsort', 'pr', 'zcat', 'bzcat', 'xzcat',
]);
/** Commands that look at names and metadata only. */
const LISTERS = new Set(['ls', 'tree', 'du', 'stat', 'file', 'realpath', 'readlink', 'dir', 'vdir', 'lsattr', 'namei']);

const READER_VALUES: Record<string, string[]> = {
  head: ['-n', '-c', '--lines', '--bytes'],
  tail: ['-n', '-c', '--lines', '--bytes', '-s', '--sleep-interval', '--pid'],
  cut: ['-d', '-f', '-c', '-b', '--delimiter', '--fields', '--characters', '--bytes', '--output-delimiter'],
  paste: ['-d', '--delimiters'],
  join: ['-t', '-1', '-2', '-j', '-o', '-a', '-v', '-e'],
  fold: ['-w', '--width'],
  column: ['-s', '-c', '-t', '-o', '-N', '-R', '-W', '-H'],
  nl: ['-b', '-d', '-f', '-h', '-i', '-l', '-n', '-s', '-v', '-w'],
  od: ['-A', '-j', '-N', '-t', '-w', '--address-radix', '--skip-bytes', '--read-bytes', '--format', '--width'],
  hexdump: ['-e', '-f', '-n', '-s'],
  fmt: ['-w', '-p', '-g', '--width'],
  tree: ['-L', '-P', '-I', '--filelimit', '-o'],
  du: ['-d', '--max-depth', '-B', '--block-size', '--exclude', '-t', '--threshold', '--time-style'],
  stat: ['-c', '--format', '--printf'],
  ls: ['-I', '--ignore', '-w', '--width', '--color', '--format', '--sort', '--time-style', '-T', '--tabsize', '--hide', '--block-size'],
  wc: ['--files0-from'],
  file: ['-m', '-f', '-F', '-P'],
};

/** The effects of one simple command (argv after wrappers are peeled), looked up by its name. */
export function commandEffects(command: SimpleCommand): CommandEffects {
  const effects = redirectionsOnly(command);
  const nameValue = command.args[0];
  if (nameValue === undefined) return { ...effects, name: '', known: true };
  const name = baseName(nameValue.text);
  const rest = command.args.slice(1);
  const base: CommandEffects = { ...effects, name };
  for (const [variable] of command.assignments) {
    if (variable.startsWith('GIT_') && !HARMLESS_GIT_ENV.test(variable)) {
      base.hazards.push({ rule: 'baseline.git-owned', reason: `${variable} points git somewhere else or runs a program through it` });
    }
    if (variable === 'LD_PRELOAD' || variable === 'LD_LIBRARY_PATH' || variable === 'BASH_ENV' || variable === 'ENV' || variable === 'PROMPT_COMMAND') {
      base.why = `${variable} makes the command load code the guard cannot see`;
    }
  }
  const known = (paths: PathUse[], extra: Partial<CommandEffects> = {}): CommandEffects => ({
    ...base,
    known: base.why === undefined,
    paths: [...base.paths, ...paths],
    ...extra,
  });
  const unknown = (why: string, paths: PathUse[] = [], extra: Partial<CommandEffects> = {}): CommandEffects => ({
    ...base,
    known: false,
    why: base.why ?? why,
    paths: [...base.paths, ...paths],
    ...extra,
  });
  if (nameValue.unknown !== undefined) return unknown('its name is not known before it runs', anyPaths(rest, 'argument'));

  if (PRIVILEGE.has(name)) {
    base.hazards.push({ rule: 'baseline.privilege', reason: `\`${name}\` changes privileges or the root` });
    return unknown(`\`${name}\` changes privileges`, [], { wrapper: true });
  }
  if (WRAPPERS.has(name)) {
    if (name === 'env' && !rest.some((arg) => !arg.text.startsWith('-') && !arg.text.includes('='))) return known([]);
    if (name === 'command' && rest.some((arg) => /^-[pvV]*[vV]/.test(arg.text))) return known([]);
    if (name === 'xargs') {
      const parsed = parseArgs(rest, { value: ['-a', '--arg-file', '-d', '-E', '-I', '-L', '-n', '-P', '-s'] });
      return known(optionValues(parsed, '-a', '--arg-file').map((value) => use(value, 'read', 'xargs -a')), { wrapper: true });
    }
    return known([], { wrapper: true });
  }
  if (SHELLS.has(name)) {
    const inline = rest.some((arg) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg.text));
    if (inline) return known([], { wrapper: true, role: 'interpreter' });
    const script = rest.find((arg) => !arg.text.startsWith('-') && !arg.text.startsWith('+'));
    return unknown(script ? `it runs the script ${script.text}` : `\`${name}\` runs what it reads`, script ? [use(script, 'exec', `${name} script`)] : [], { role: 'interpreter' });
  }
  if (INTERPRETERS.has(name) || /^python\d(\.\d+)?$/.test(name)) {
    return unknown(`\`${name}\` runs code the guard cannot see`, anyPaths(rest, 'argument', 'exec'), { role: 'interpreter' });
  }
  if (DOWNLOADERS.has(name)) return unknown(`\`${name}\` talks to the network`, anyPaths(rest, 'argument'), { role: 'downloader' });
  if (DEVICE_TOOLS.has(name) || /^mkfs\./.test(name)) {
    base.hazards.push({ rule: 'baseline.device-write', reason: `\`${name}\` writes to devices or mounts` });
    return unknown(`\`${name}\` writes to devices`);
  }
  if (BROAD_KILLERS.has(name)) {
    base.hazards.push({ rule: 'baseline.broad-kill', reason: `\`${name}\` kills processes by name` });
    return unknown(`\`${name}\` kills processes`);
  }
  if (name === 'kill') {
    // The first `-N` or `-SIG` is the signal; after it, `-1`, `0`, `1` and `-PGID` reach many processes.
    let targets = rest;
    if (targets[0]?.text === '-s' || targets[0]?.text === '-n') targets = targets.slice(2);
    else if (targets[0]?.text.startsWith('-') && targets[0].text !== '--') targets = targets.slice(1);
    if (targets[0]?.text === '--') targets = targets.slice(1);
    if (targets.some((t) => t.unknown !== undefined || /^(-\d+|0|1)$/.test(t.text))) {
      base.hazards.push({ rule: 'baseline.broad-kill', reason: '`kill` of every process, a process group or init' });
    }
    return unknown('`kill` signals processes');
  }
  if (name === 'chmod' || name === 'chown' || name === 'chgrp') {
    const parsed = parseArgs(rest, { value: ['--reference'] });
    const recursive = hasOption(parsed, '-R', '--recursive');
    if (recursive) base.hazards.push({ rule: 'baseline.recursive-permissions', reason: `recursive \`${name}\`` });
    const operands = parsed.operands.slice(1);
    if (name === 'chmod' && /[ugoa]*[+=][^,]*s/.test(parsed.operands[0]?.text ?? '')) base.hazards.push({ rule: 'baseline.privilege', reason: 'chmod sets a set-user-id or set-group-id bit' });
    if (name === 'chmod' && /^[0-7]{4}$/.test(parsed.operands[0]?.text ?? '') && Number.parseInt(parsed.operands[0]!.text[0]!, 8) & 6) base.hazards.push({ rule: 'baseline.privilege', reason: 'chmod sets a set-user-id or set-group-id bit' });
    if (name !== 'chmod') return unknown(`\`${name}\` changes ownership`, operands.map((value) => use(value, 'write', name, recursive)));
    return known(operands.map((value) => use(value, 'write', name, recursive)));
  }
  if (name === 'git') return gitEffects(rest, base);
  if (NO_FILE_ARGS.has(name)) {
    if (name === 'date' && rest.some((arg) => /^(-s|--set)/.test(arg.text))) return unknown('`date -s` sets the clock');
    if (name === 'date') return known(optionValues(parseArgs(rest, { value: ['-f', '--file', '-r', '--reference', '-d', '--date'] }), '-f', '--file').map((v) => use(v, 'read', 'date -f')));
    return known([]);
  }
  if (READERS.has(name) || LISTERS.has(name)) {
    const parsed = parseArgs(rest, { value: READER_VALUES[name] ?? [] });
    const access: Access = LISTERS.has(name) ? 'list' : 'read';
    const paths = parsed.operands.map((value) => use(value, access, `${name} argument`, hasOption(parsed, '-R', '--recursive') && name === 'ls'));
    paths.push(...optionValues(parsed, '--files0-from').map((value) => use(value, 'read', `${name} --files0-from`)));
    if (name === 'tree') paths.push(...optionValues(parsed, '-o').map((value) => use(value, 'write', 'tree -o')));
    if (name === 'tail' && hasOption(parsed, '-f', '-F', '--follow')) return unknown('`tail -f` never ends by itself', paths);
    return known(paths);
  }
  switch (name) {
    case 'grep':
    case 'egrep':
    case 'fgrep':
    case 'rgrep':
      return grepEffects(name, rest, known);
    case 'rg':
      return rgEffects(rest, known, unknown);
    case 'find':
      return findEffects(rest, known);
    case 'sed':
      return sedEffects(rest, known, unknown);
    case 'awk':
    case 'gawk':
    case 'mawk':
    case 'nawk':
      return awkEffects(name, rest, known, unknown);
    case 'jq':
    case 'yq': {
      const parsed = parseArgs(rest, { value: ['--arg', '--argjson', '--slurpfile', '--rawfile', '--indent', '-f', '--from-file', '-L'] });
      const files = hasOption(parsed, '-f', '--from-file') ? parsed.operands : parsed.operands.slice(1);
      if (hasOption(parsed, '-i', '--inplace')) return known(files.map((v) => use(v, 'write', `${name} -i`)));
      return known([...files, ...optionValues(parsed, '-f', '--from-file')].map((v) => use(v, 'read', `${name} argument`)));
    }
    case 'sort': {
      const parsed = parseArgs(rest, { value: ['-k', '-t', '-o', '-S', '-T', '--key', '--field-separator', '--output', '--buffer-size', '--temporary-directory', '--parallel', '--files0-from', '--batch-size'] });
      return known([
        ...parsed.operands.map((v) => use(v, 'read', 'sort argument')),
        ...optionValues(parsed, '-o', '--output').map((v) => use(v, 'write', 'sort -o')),
        ...optionValues(parsed, '--files0-from').map((v) => use(v, 'read', 'sort --files0-from')),
      ]);
    }
    case 'uniq': {
      const parsed = parseArgs(rest, { value: ['-f', '-s', '-w', '--skip-fields', '--skip-chars', '--check-chars'] });
      const [input, output] = parsed.operands;
      return known([...(input ? [use(input, 'read', 'uniq input')] : []), ...(output ? [use(output, 'write', 'uniq output')] : [])]);
    }
    case 'xxd': {
      const parsed = parseArgs(rest, { value: ['-c', '-g', '-l', '-o', '-s', '-n', '-C'] });
      const [input, output] = parsed.operands;
      return known([...(input ? [use(input, 'read', 'xxd input')] : []), ...(output ? [use(output, 'write', 'xxd output')] : [])]);
    }
    case 'diff':
    case 'diff3':
    case 'sdiff': {
      const parsed = parseArgs(rest, { value: ['-U', '-C', '-x', '-X', '-I', '-F', '-L', '--label', '--exclude', '--exclude-from', '--ignore-matching-lines', '-W', '--width', '-o', '--output'] });
      const recursive = hasOption(parsed, '-r', '--recursive');
      return known([
        ...parsed.operands.map((v) => use(v, 'read', `${name} argument`, recursive)),
        ...optionValues(parsed, '-o', '--output').map((v) => use(v, 'write', `${name} -o`)),
      ]);
    }
    case 'tee': {
      const parsed = parseArgs(rest, { value: ['--output-error'] });
      return known(parsed.operands.map((v) => use(v, 'write', 'tee file')));
    }
    case 'touch':
    case 'mkdir':
    case 'rmdir':
    case 'truncate':
    case 'shred': {
      const parsed = parseArgs(rest, { value: ['-m', '--mode', '-d', '--date', '-r', '--reference', '-t', '-s', '--size', '-n', '--iterations', '--context', '-Z'] });
      return known(parsed.operands.map((v) => use(v, 'write', `${name} argument`)));
    }
    case 'rm':
    case 'unlink': {
      const parsed = parseArgs(rest, { value: ['--interactive'] });
      const recursive = hasOption(parsed, '-r', '-R', '--recursive');
      return known(parsed.operands.map((v) => use(v, 'write', `${name} argument`, recursive)));
    }
    case 'cp':
    case 'mv':
    case 'ln':
    case 'install':
    case 'rsync':
      return copyEffects(name, rest, known);
    case 'dd': {
      const paths: PathUse[] = [];
      for (const arg of rest) {
        if (arg.text.startsWith('if=')) paths.push(use({ ...arg, text: arg.text.slice(3) }, 'read', 'dd if='));
        if (arg.text.startsWith('of=')) paths.push(use({ ...arg, text: arg.text.slice(3) }, 'write', 'dd of='));
      }
      return known(paths);
    }
    default:
      return unknown(`\`${name}\` is not a command the guard knows to be safe`, anyPaths(rest, 'argument'));
  }
}

type Known = (paths: PathUse[], extra?: Partial<CommandEffects>) => CommandEffects;
type Unknown = (why: string, paths?: PathUse[], extra?: Partial<CommandEffects>) => CommandEffects;

export function use(value: WordValue, access: Access, origin: string, recursive = false): PathUse {
  return { value, access, recursive, origin };
}

/**
 * Every argument of a command the guard does not know might be a path it reads, so
 * secrets are checked on each (and on the value of `--opt=value` and `rev:path`).
 */
export function anyPaths(args: WordValue[], origin: string, access: Access = 'read'): PathUse[] {
  const uses: PathUse[] = [];
  for (const arg of args) {
    if (arg.unknown !== undefined) continue;
    if (!arg.text.startsWith('-')) uses.push(use(arg, access, origin));
    const eq = arg.text.indexOf('=');
    if (eq > 0) uses.push(use({ ...arg, text: arg.text.slice(eq + 1), glob: null }, access, origin));
    const colon = arg.text.indexOf(':');
    if (colon > 0 && !arg.text.includes('://')) uses.push(use({ ...arg, text: arg.text.slice(colon + 1), glob: null }, access, origin));
  }
  return uses;
}

function redirectionsOnly(command: SimpleCommand): CommandEffects {
  const paths: PathUse[] = [];
  for (const redirect of command.redirects) {
    if (redirect.access === 'none') continue;
    for (const target of redirect.targets) {
      if (redirect.access === 'read' || redirect.access === 'readwrite') paths.push(use(target, 'read', `redirect ${redirect.operator}`));
      if (redirect.access === 'write' || redirect.access === 'readwrite') paths.push(use(target, 'write', `redirect ${redirect.operator}`));
    }
  }
  return { name: '', known: true, wrapper: false, paths, hazards: [] };
}

function grepEffects(name: string, rest: WordValue[], known: Known): CommandEffects {
  const parsed = parseArgs(rest, {
    value: ['-e', '-f', '-m', '-A', '-B', '-C', '-d', '-D', '--regexp', '--file', '--max-count', '--after-context', '--before-context', '--context', '--include', '--exclude', '--exclude-dir', '--exclude-from', '--directories', '--devices', '--label', '--color', '--colour', '--binary-files'],
  });
  const explicitPattern = hasOption(parsed, '-e', '-f', '--regexp', '--file');
  const files = explicitPattern ? parsed.operands : parsed.operands.slice(1);
  const recursive = name === 'rgrep' || hasOption(parsed, '-r', '-R', '--recursive', '--dereference-recursive') || optionValues(parsed, '-d', '--directories').some((v) => v.text === 'recurse');
  const paths = files.map((value) => use(value, 'read', `${name} file`, recursive));
  if (recursive && files.length === 0) paths.push(use({ text: '.', glob: null }, 'read', `${name} -r`, true));
  paths.push(...optionValues(parsed, '-f', '--file', '--exclude-from').map((v) => use(v, 'read', `${name} -f`)));
  return known(paths);
}

function rgEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, {
    value: ['-e', '-f', '-g', '-m', '-A', '-B', '-C', '-t', '-T', '-j', '-M', '-E', '--regexp', '--file', '--glob', '--iglob', '--max-count', '--type', '--type-not', '--threads', '--max-columns', '--encoding', '--context', '--after-context', '--before-context', '--sort', '--sortr', '--max-depth', '--color', '--colors', '--path-separator', '--pre', '--pre-glob', '--type-add', '--replace', '-r', '--ignore-file'],
  });
  if (hasOption(parsed, '--pre', '-z', '--search-zip')) return unknown('`rg --pre` and `rg -z` run other programs');
  const listOnly = hasOption(parsed, '--files', '--type-list');
  const files = hasOption(parsed, '-e', '-f', '--regexp', '--file') || listOnly ? parsed.operands : parsed.operands.slice(1);
  const hidden = hasOption(parsed, '--hidden', '-.', '-u', '--unrestricted', '--no-ignore', '--no-ignore-dot');
  const origin = hidden ? 'rg search' : 'rg search (hidden files skipped)';
  const access: Access = listOnly ? 'list' : 'read';
  const paths = (files.length === 0 ? [{ text: '.', glob: null } as WordValue] : files).map((value) => use(value, access, origin, true));
  paths.push(...optionValues(parsed, '-f', '--file', '--ignore-file').map((v) => use(v, 'read', 'rg -f')));
  return known(paths);
}

const FIND_VALUE = ['-name', '-iname', '-path', '-ipath', '-regex', '-iregex', '-type', '-xtype', '-maxdepth', '-mindepth', '-newer', '-perm', '-size', '-user', '-group', '-mtime', '-mmin', '-atime', '-amin', '-ctime', '-cmin', '-printf', '-wholename', '-iwholename', '-lname', '-ilname', '-links', '-inum', '-samefile', '-used', '-uid', '-gid', '-context', '-fstype', '-regextype', '-newermt', '-anewer', '-cnewer'];

function findEffects(rest: WordValue[], known: Known): CommandEffects {
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
    if (text === '-newer' || text === '-anewer' || text === '-cnewer' || text === '-samefile') j += 1;
    if (FIND_VALUE.includes(text)) j += 1;
    if (/^-(exec|execdir|ok|okdir)$/.test(text)) exec = true;
  }
  return known(paths, { ...(exec ? { wrapper: true } : {}), ...(implied.length > 0 ? { implied } : {}) });
}

function sedEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: ['-e', '-f', '-l', '--expression', '--file', '--line-length'] });
  const scripts = optionValues(parsed, '-e', '--expression');
  const explicit = hasOption(parsed, '-e', '-f', '--expression', '--file');
  const files = explicit ? parsed.operands : parsed.operands.slice(1);
  if (!explicit && parsed.operands[0]) scripts.push(parsed.operands[0]);
  const inPlace = parsed.options.some((option) => /^-i|^--in-place/.test(option.name) || (option.name.startsWith('-') && !option.name.startsWith('--') && option.name.includes('i')));
  const paths = files.map((value) => use(value, inPlace ? 'write' : 'read', inPlace ? 'sed -i file' : 'sed file'));
  if (inPlace) paths.push(...files.map((value) => use(value, 'read', 'sed -i file')));
  paths.push(...optionValues(parsed, '-f', '--file').map((v) => use(v, 'read', 'sed -f')));
  if (hasOption(parsed, '-f', '--file')) return unknown('`sed -f` runs a script the guard cannot read', paths);
  for (const script of scripts) {
    if (script.unknown !== undefined || sedScriptEscapes(script.text)) return unknown('the sed script writes files or runs commands (`w`, `W`, `e`, `r`)', paths);
  }
  return known(paths);
}

/** A sed script that can write a file or run a command: `w`/`W`/`e`/`r`/`R` commands or `s///w`, `s///e` flags. */
function sedScriptEscapes(script: string): boolean {
  const withoutSubstitutions = script.replace(/s(.)(?:\\.|(?!\1).)*\1(?:\\.|(?!\1).)*\1([a-zA-Z0-9]*)/g, (_m, _d, flags: string) => (/[we]/.test(flags) ? ' w ' : ' '));
  return /(^|[;\n{}\s\d$/!,])\s*[wWerR](\s|$)/.test(withoutSubstitutions) || /(^|[;\n{}])\s*[wWerR]\S/.test(withoutSubstitutions);
}

function awkEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: ['-F', '-v', '-f', '--field-separator', '--assign', '--file'] });
  if (hasOption(parsed, '-f', '--file')) return unknown(`\`${name} -f\` runs a program the guard cannot read`);
  const [program, ...files] = parsed.operands;
  if (program === undefined || program.unknown !== undefined) return unknown(`the ${name} program is not known`);
  if (/system|getline|\||>|fflush|close|ENVIRON/.test(program.text)) return unknown(`the ${name} program runs commands, writes files or reads the environment`, files.map((v) => use(v, 'read', `${name} file`)));
  return known(files.filter((v) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(v.text)).map((v) => use(v, 'read', `${name} file`)));
}

function copyEffects(name: string, rest: WordValue[], known: Known): CommandEffects {
  const parsed: ParsedArgs = parseArgs(rest, { value: ['-t', '--target-directory', '-S', '--suffix', '-m', '--mode', '-o', '--owner', '-g', '--group', '--backup', '-e', '--exclude', '--include', '--exclude-from', '--files-from', '--chmod', '--rsh'] });
  if (name === 'rsync' && (hasOption(parsed, '-e', '--rsh') || parsed.operands.some((v) => v.text.includes(':')))) {
    return { ...known([]), known: false, why: 'rsync to or from another host runs a remote shell' };
  }
  const recursive = hasOption(parsed, '-r', '-R', '-a', '--recursive', '--archive') || name === 'mv' || name === 'rsync';
  const target = optionValues(parsed, '-t', '--target-directory')[0];
  const operands = parsed.operands;
  const sources = target ? operands : operands.slice(0, -1);
  const destination = target ?? operands[operands.length - 1];
  const paths: PathUse[] = [];
  if (name === 'ln') {
    // The link itself is what gets written; where it points is looked at, so a link
    // out of the worktree is not made without a person seeing it.
    const symbolic = hasOption(parsed, '-s', '--symbolic');
    const linkDir = destination === undefined ? '.' : destination.text.endsWith('/') ? destination.text : destination.text.includes('/') ? destination.text.slice(0, destination.text.lastIndexOf('/')) : '.';
    for (const source of sources) {
      // A relative symlink target is read from the link's own directory.
      const relativeToLink = symbolic && sources.length === 1 && !source.text.startsWith('/') && source.unknown === undefined;
      paths.push(use(relativeToLink ? { ...source, text: `${linkDir}/${source.text}`, glob: null } : source, 'list', 'ln target'));
    }
    if (destination && sources.length > 0) paths.push(use(destination, 'write', 'ln link'));
    else if (operands.length === 1) paths.push(use({ text: '.', glob: null }, 'write', 'ln link'));
    return known(paths);
  }
  for (const source of sources) paths.push(use(source, name === 'mv' ? 'write' : 'read', `${name} source`, recursive));
  if (name === 'mv') for (const source of sources) paths.push(use(source, 'read', 'mv source', true));
  if (destination) paths.push(use(destination, 'write', `${name} destination`, recursive));
  return known(paths);
}

export function isInterpreterName(name: string): boolean {
  return INTERPRETERS.has(name) || /^python\d(\.\d+)?$/.test(name);
}
