import type { SimpleCommand } from '../shell/analyse.js';
import { HARMLESS_GIT } from '../shell/hazards.js';
import { BOURNE_SHELLS, baseName } from '../shell/wrappers.js';
import type { WordValue } from '../shell/words.js';
import { copyEffects, ddEffects, mktempEffects, permissionEffects, tarEffects, writerEffects } from './files.js';
import { gitEffects } from './git.js';
import { hasOption, optionValues, parseArgs, UNKNOWN_ARGUMENT } from './options.js';
import { npmEffects } from './package-managers.js';
import { findEffects, grepEffects, rgEffects } from './search.js';
import { SPECS } from './specs.js';
import { awkEffects, diffEffects, inputOutputEffects, jqEffects, sedEffects, sortEffects } from './text.js';
import { anyPaths, unknownOption, use, type CommandEffects, type PathUse } from './types.js';

export type { Access, CommandEffects, Hazard, PathUse } from './types.js';

const WRAPPERS = new Set(['env', 'command', 'builtin', 'exec', 'nice', 'ionice', 'nohup', 'timeout', 'time', 'stdbuf', 'setsid', 'watch', 'xargs', 'coproc']);
const SHELLS = new Set([...BOURNE_SHELLS, 'fish', 'csh', 'tcsh']);
const INTERPRETERS = new Set([...SHELLS, 'python', 'python2', 'python3', 'node', 'nodejs', 'deno', 'bun', 'perl', 'ruby', 'php', 'lua', 'Rscript', 'tclsh', 'osascript', 'pwsh', 'source', '.']);
const DOWNLOADERS = new Set(['curl', 'wget', 'fetch', 'aria2c', 'http', 'https', 'nc', 'ncat', 'netcat', 'socat', 'lynx', 'links']);
const PRIVILEGE = new Set(['sudo', 'doas', 'su', 'pkexec', 'runuser', 'chroot', 'setcap', 'setpriv', 'unshare', 'nsenter', 'capsh']);
const DEVICE_TOOLS = new Set(['mkfs', 'fdisk', 'sfdisk', 'parted', 'wipefs', 'mkswap', 'swapon', 'losetup', 'mount', 'umount', 'blkdiscard', 'hdparm']);
const BROAD_KILLERS = new Set(['killall', 'pkill', 'killall5', 'skill', 'slay']);
const VERSION_FLAGS = new Set(['--version', '-v', '-V']);

/** Commands that print or compute without touching files named by their arguments. */
const NO_FILE_ARGS = new Set([
  'echo', 'printf', 'true', 'false', ':', 'test', '[', '[[', 'pwd', 'seq', 'expr', 'sleep', 'id', 'whoami', 'uname',
  'printenv', 'basename', 'dirname', 'which', 'type', 'cd', 'pushd', 'popd', 'dirs', 'set', 'export',
  'wait', 'exit', 'return', 'shift', 'break', 'continue', 'local', 'declare', 'typeset', 'readonly', 'read', 'getopts',
  'mapfile', 'readarray', 'unset', 'tr', 'yes', 'nproc', 'arch', 'tty', 'locale', 'groups', 'logname', 'factor', 'numfmt',
]);

/** The effects of one simple command (argv after wrappers are peeled), looked up by its name. */
export function commandEffects(command: SimpleCommand): CommandEffects {
  const effects = redirectionsOnly(command);
  const nameValue = command.args[0];
  if (nameValue === undefined) return { ...effects, name: '', known: true };
  const name = baseName(nameValue.text);
  const rest = command.args.slice(1);
  const base: CommandEffects = { ...effects, name };
  for (const [variable] of command.assignments) {
    if (variable.startsWith('GIT_') && !HARMLESS_GIT.test(variable)) {
      base.hazards.push({ rule: 'baseline.git-owned', reason: `${variable} points git somewhere else or runs a program through it` });
    }
  }
  const known = (paths: PathUse[], extra: Partial<CommandEffects> = {}): CommandEffects => ({ ...base, known: base.why === undefined, paths: [...base.paths, ...paths], ...extra });
  const unknown = (why: string, paths: PathUse[] = [], extra: Partial<CommandEffects> = {}): CommandEffects => ({ ...base, known: false, why: base.why ?? why, paths: [...base.paths, ...paths], ...extra });
  if (nameValue.unknown !== undefined) return unknown('its name is not known before it runs', anyPaths(rest, 'argument'));

  if (PRIVILEGE.has(name)) {
    base.hazards.push({ rule: 'baseline.privilege', reason: `\`${name}\` changes privileges or the root` });
    return unknown(`\`${name}\` changes privileges`, [], { wrapper: true });
  }
  // `node --version`: a program found on PATH asked only for its version.
  if (rest.length === 1 && VERSION_FLAGS.has(rest[0]!.text) && !nameValue.text.includes('/')) return known([]);
  if (WRAPPERS.has(name)) return wrapperEffects(name, rest, known, unknown);
  if (SHELLS.has(name)) {
    const inline = rest.some((arg) => /^-[a-zA-Z]*c[a-zA-Z]*$/.test(arg.text));
    if (inline) return known([], { wrapper: true, role: 'interpreter' });
    const script = rest.find((arg) => !arg.text.startsWith('-') && !arg.text.startsWith('+'));
    return unknown(script ? `it runs the script ${script.text}` : `\`${name}\` runs what it reads`, script ? [use(script, 'exec', `${name} script`)] : [], { role: 'interpreter' });
  }
  if (INTERPRETERS.has(name) || /^python\d(\.\d+)?$/.test(name)) return unknown(`\`${name}\` runs code the guard cannot see`, anyPaths(rest, 'argument', 'exec'), { role: 'interpreter' });
  if (DOWNLOADERS.has(name)) return unknown(`\`${name}\` talks to the network`, anyPaths(rest, 'argument'), { role: 'downloader' });
  if (DEVICE_TOOLS.has(name) || /^mkfs\./.test(name)) {
    base.hazards.push({ rule: 'baseline.device-write', reason: `\`${name}\` writes to devices or mounts` });
    return unknown(`\`${name}\` writes to devices`);
  }
  if (BROAD_KILLERS.has(name)) {
    base.hazards.push({ rule: 'baseline.broad-kill', reason: `\`${name}\` kills processes by name`, contained: true });
    return unknown(`\`${name}\` kills processes`);
  }
  if (name === 'kill') {
    if (killsBroadly(rest)) base.hazards.push({ rule: 'baseline.broad-kill', reason: '`kill` of every process, a process group or init', contained: true });
    return unknown('`kill` signals processes');
  }
  if (name === 'chmod' || name === 'chown' || name === 'chgrp') return permissionEffects(name, rest, base.hazards, known, unknown);
  if (name === 'git') return gitEffects(rest, base);
  if (name === 'npm') return npmEffects(rest, known, unknown);
  if (name === 'date') {
    const parsed = parseArgs(rest, { value: ['-d', '-f', '-r', '--date', '--file', '--reference', '--rfc-3339', '--resolution'], optional: ['-I', '--iso-8601'], long: ['--debug', '--rfc-email', '--utc', '--universal'] });
    if (parsed.unknown.length > 0 || hasOption(parsed, '-s')) return unknown('`date` may set the clock');
    return known(optionValues(parsed, '-f', '--file', '-r', '--reference').map((v) => use(v, 'read', 'date --file')));
  }
  if (NO_FILE_ARGS.has(name)) return known([]);
  const spec = SPECS[name];
  if (spec !== undefined) {
    const parsed = parseArgs(rest, spec);
    if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
    // The file such an option names is read all the same: a secret there is still denied.
    const named = optionValues(parsed, ...(spec.runs ?? []), ...(spec.indirect ?? [])).map((value) => use(value, 'read', `${name} option`));
    const runs = parsed.options.find((option) => spec.runs?.includes(option.name));
    if (runs !== undefined) return unknown(`\`${name} ${runs.name}\` runs other programs or loads what may run them`, named);
    const indirect = parsed.options.find((option) => spec.indirect?.includes(option.name));
    if (indirect !== undefined) return unknown(`\`${name} ${indirect.name}\` reads or writes files no argument names`, named);
    const instruction = spec.operandCommand === undefined ? undefined : parsed.operands.map((value) => spec.operandCommand!(value.text)).find((why) => why !== null);
    if (instruction) return unknown(instruction, parsed.operands.map((value) => use(value, 'read', `${name} argument`)));
    const recursive = spec.recursive?.some((flag) => hasOption(parsed, flag)) ?? false;
    const access = spec.operands === 'list' && !(spec.readsOperands?.some((flag) => hasOption(parsed, flag)) ?? false) ? 'list' : 'read';
    // Listing looks at an entry itself (`ls -l link`), unless a trailing slash asks for what it points to.
    const paths = spec.operands === 'none' ? [] : parsed.operands.map((value) => use(value, access, `${name} argument`, recursive, access === 'list' && !value.text.endsWith('/') ? { noFollow: true } : {}));
    paths.push(...optionValues(parsed, ...(spec.reads ?? [])).map((value) => use(value, 'read', `${name} option`)));
    paths.push(...optionValues(parsed, ...(spec.writes ?? [])).map((value) => use(value, 'write', `${name} option`)));
    if (name === 'tail' && hasOption(parsed, '-f', '-F', '--follow')) return unknown('`tail -f` never ends by itself', paths);
    return known(paths);
  }
  switch (name) {
    case 'grep':
    case 'egrep':
    case 'fgrep':
    case 'rgrep':
      return grepEffects(name, rest, known, unknown);
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
    case 'yq':
      return jqEffects(name, rest, known, unknown);
    case 'sort':
      return sortEffects(rest, known, unknown);
    case 'uniq':
      return inputOutputEffects('uniq', rest, ['-f', '-s', '-w', '--skip-fields', '--skip-chars', '--check-chars'], ['--count', '--repeated', '--ignore-case', '--unique', '--zero-terminated'], known, unknown, ['--all-repeated', '--group']);
    case 'xxd':
      return xxdEffects(rest, known, unknown);
    case 'diff':
    case 'diff3':
    case 'sdiff':
      return diffEffects(name, rest, known, unknown);
    case 'tee':
    case 'touch':
    case 'mkdir':
    case 'rmdir':
    case 'truncate':
    case 'shred':
    case 'rm':
    case 'unlink':
      return writerEffects(name, rest, known, unknown);
    case 'cp':
    case 'mv':
      return copyEffects(name, rest, known, unknown);
    case 'dd':
      return ddEffects(rest, known, unknown);
    case 'mktemp':
      return mktempEffects(rest, known, unknown);
    case 'tar':
      return tarEffects(rest, known, unknown);
    case 'ln':
      // A link lets a later write land where the guard did not look.
      return unknown('`ln` makes links that later writes can go through', anyPaths(rest, 'argument', 'list'));
    default:
      return unknown(`\`${name}\` is not a command the guard knows to be safe`, anyPaths(rest, 'argument'));
  }
}

/** xxd takes whole-word options (`-ps`, `-cols 8`), never clusters; `[input [output]]` after them. */
function xxdEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const withValue = new Set(['-c', '-cols', '-g', '-groupsize', '-l', '-len', '-o', '-offset', '-s', '-seek', '-n', '-name']);
  const operands: WordValue[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg.unknown !== undefined) return unknown(unknownOption('xxd', UNKNOWN_ARGUMENT));
    if (arg.text === '--') {
      operands.push(...rest.slice(i + 1));
      break;
    }
    if (arg.text.startsWith('-') && arg.text !== '-') {
      if (withValue.has(arg.text)) i += 1;
      continue;
    }
    operands.push(arg);
  }
  const [input, output] = operands;
  return known([...(input ? [use(input, 'read', 'xxd input')] : []), ...(output ? [use(output, 'write', 'xxd output')] : [])]);
}

type Known = (paths: PathUse[], extra?: Partial<CommandEffects>) => CommandEffects;
type Unknown = (why: string, paths?: PathUse[], extra?: Partial<CommandEffects>) => CommandEffects;

/** A wrapper is judged by what it runs; its own options that open files are judged here. */
function wrapperEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  if (name === 'env' && !rest.some((arg) => !arg.text.startsWith('-') && !arg.text.includes('='))) return known([]);
  if (name === 'command' && rest.some((arg) => /^-[pvV]*[vV]/.test(arg.text))) return known([]);
  if (name === 'xargs') {
    const parsed = parseArgs(rest, { value: ['-a', '-d', '-E', '-I', '-L', '-n', '-P', '-s', '--arg-file', '--delimiter', '--max-args', '--max-procs', '--max-chars', '--process-slot-var'], optional: ['-e', '-i', '-l', '--eof', '--replace', '--max-lines'], long: ['--null', '--interactive', '--no-run-if-empty', '--show-limits', '--verbose', '--exit', '--open-tty'] });
    // The command xargs runs is judged on its own; here only what xargs itself opens.
    if (parsed.options.some((option) => ['-i', '--replace', '-I'].includes(option.name))) return unknown('`xargs -i` puts its input into the command, where the guard cannot see it', [], { wrapper: true });
    if (parsed.unknown.length > 0) return unknown(unknownOption('xargs', parsed.unknown[0]!), [], { wrapper: true });
    return known(optionValues(parsed, '-a', '--arg-file').map((value) => use(value, 'read', 'xargs -a')), { wrapper: true });
  }
  if (name === 'time') {
    // GNU time writes its report to -o FILE.
    const outputs: PathUse[] = [];
    for (let i = 0; i < rest.length && rest[i]!.text.startsWith('-'); i++) {
      const text = rest[i]!.text;
      if (text === '-o' || text === '--output') outputs.push(use(rest[++i] ?? { text: '', glob: null }, 'write', 'time -o'));
      else if (text.startsWith('--output=') || (text.startsWith('-o') && text.length > 2)) outputs.push(use({ ...rest[i]!, text: text.replace(/^(--output=|-o)/, '') }, 'write', 'time -o'));
      else if (text === '-f' || text === '--format') i += 1;
    }
    return known(outputs, { wrapper: true });
  }
  return known([], { wrapper: true });
}

/** The first `-N` or `-SIG` is the signal; any target that is 1, 0, negative (a group) or unknown reaches many processes. */
function killsBroadly(args: WordValue[]): boolean {
  let targets = args;
  if (targets[0]?.text === '-s' || targets[0]?.text === '-n') targets = targets.slice(2);
  else if (targets[0]?.text.startsWith('-') && targets[0].text !== '--' && targets[0].text !== '-1') targets = targets.slice(1);
  if (targets[0]?.text === '--') targets = targets.slice(1);
  return targets.some((target) => {
    if (target.unknown !== undefined) return true;
    const pid = Number(target.text);
    return Number.isFinite(pid) ? pid <= 1 : !target.text.startsWith('%');
  });
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
