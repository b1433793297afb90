import { unknownValue, type WordValue } from './words.js';

/** What a wrapper such as `timeout 5 cmd` or `bash -c '...'` runs in its place. */
export interface Unwrapped {
  wrapper: string;
  /** The commands it runs, as argv. */
  commands: WordValue[][];
  /** Scripts it runs through a shell (`bash -c`, `watch`, `su -c`): parsed again. */
  scripts: string[];
  /** A directory the inner command runs in (`env -C`, `git -C`). */
  cwd?: WordValue;
  assignments: Map<string, WordValue[]>;
  problem?: string;
}

/** Shells whose `-c` string is bash-like enough to parse again. */
export const BOURNE_SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'busybox-sh']);
const GIT_OPTIONS_WITH_VALUE = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--exec-path', '--config-env', '--super-prefix']);

type Args = WordValue[];

/** Peels one wrapper off an argv; null when argv[0] runs nothing else. */
export function unwrapCommand(args: Args): Unwrapped | null {
  const name = baseName(args[0]?.text ?? '');
  const rest = args.slice(1);
  const result = (commands: Args[], extra: Partial<Unwrapped> = {}): Unwrapped => ({
    wrapper: name,
    commands: commands.filter((command) => command.length > 0),
    scripts: [],
    assignments: new Map(),
    ...extra,
  });
  switch (name) {
    case 'env':
      return unwrapEnv(rest);
    case 'command': {
      // Only command's own options count: `command test -v x` runs test, with test's -v.
      const inner = skipOptions(rest, new Set());
      if (rest.slice(0, rest.length - inner.length).some((arg) => /^-[pvV]*[vV]/.test(arg.text))) return null;
      return result([inner]);
    }
    case 'builtin':
    case 'nohup':
      return result([rest]);
    case 'exec':
      return result([skipOptions(rest, new Set(['-a']))]);
    case 'time':
      return result([skipOptions(rest, new Set(['-f', '-o', '--format', '--output']))]);
    case 'nice':
      return result([skipOptions(rest, new Set(['-n', '--adjustment']), /^-\d+$/)]);
    case 'ionice':
      return result([skipOptions(rest, new Set(['-c', '-n', '-p', '-P', '-u', '--class', '--classdata']))]);
    case 'stdbuf':
      return result([skipOptions(rest, new Set(['-i', '-o', '-e', '--input', '--output', '--error']))]);
    case 'setsid':
      return result([skipOptions(rest, new Set())]);
    case 'timeout': {
      const afterOptions = skipOptions(rest, new Set(['-s', '-k', '--signal', '--kill-after']));
      return result([afterOptions.slice(1)]);
    }
    case 'coproc':
      return result([rest], { problem: '`coproc` runs a command in the background' });
    case 'sudo':
    case 'doas':
    case 'pkexec':
      return result([skipOptions(rest, new Set(['-u', '-g', '-C', '-D', '-h', '-p', '-R', '-T', '-U', '--user', '--group']))]);
    case 'su': {
      const script = valueOf(rest, ['-c', '--command']);
      if (script === undefined) return result([]);
      return script.unknown === undefined ? result([], { scripts: [script.text] }) : result([], { problem: '`su -c` runs a command the guard cannot read' });
    }
    case 'watch':
      return unwrapWatch(rest);
    case 'xargs':
      return unwrapXargs(rest);
    case 'find':
      return unwrapFind(rest);
    case 'git':
      return unwrapGit(args);
    default:
      if (BOURNE_SHELLS.has(name)) return unwrapShell(name, rest);
      return null;
  }
}

export function baseName(command: string): string {
  const slash = command.lastIndexOf('/');
  return slash === -1 ? command : command.slice(slash + 1);
}

/**
 * Drops leading options (and the values of those in `withValue`) up to the command.
 * `--opt=value`, clustered short flags and `--` are understood.
 */
function skipOptions(args: Args, withValue: Set<string>, alsoOption?: RegExp): Args {
  let i = 0;
  while (i < args.length) {
    const text = args[i]!.text;
    if (text === '--') return args.slice(i + 1);
    if (!text.startsWith('-') || text === '-') break;
    if (alsoOption?.test(text) || (text.startsWith('--') && text.includes('='))) {
      i += 1;
      continue;
    }
    if (text.startsWith('--')) {
      i += withValue.has(text) ? 2 : 1;
      continue;
    }
    // `-ca name`: the first flag of a cluster that takes a value takes the rest, or the next word.
    const at = [...text.slice(1)].findIndex((flag) => withValue.has(`-${flag}`));
    i += at !== -1 && at === text.length - 2 ? 2 : 1;
  }
  return args.slice(i);
}

function valueOf(args: Args, names: string[]): WordValue | undefined {
  for (let i = 0; i < args.length; i++) {
    const text = args[i]!.text;
    if (names.includes(text)) return args[i + 1];
    for (const name of names) if (name.startsWith('--') && text.startsWith(`${name}=`)) return { ...args[i]!, text: text.slice(name.length + 1) };
  }
  return undefined;
}

const ENV_LONG = ['--ignore-environment', '--null', '--unset', '--chdir', '--split-string', '--debug', '--block-signal', '--default-signal', '--ignore-signal', '--list-signal-handling', '--argv0', '--help', '--version'];

/** `env [options] [NAME=value]... [command]`, options as GNU env reads them: clusters, `-S'…'`, `--ch=dir`. */
function unwrapEnv(args: Args): Unwrapped {
  const assignments = new Map<string, WordValue[]>();
  const result = (extra: Partial<Unwrapped>): Unwrapped => ({ wrapper: 'env', commands: [], scripts: [], assignments, ...extra });
  let cwd: WordValue | undefined;
  let split: WordValue | undefined;
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    const text = arg.text;
    if (arg.unknown !== undefined) return result({ problem: '`env` gets an option the guard cannot read' });
    if (text === '--') {
      i += 1;
      break;
    }
    if (text.startsWith('--')) {
      const [given, inline] = text.includes('=') ? [text.slice(0, text.indexOf('=')), text.slice(text.indexOf('=') + 1)] : [text, undefined];
      const matches = ENV_LONG.filter((option) => option.startsWith(given));
      if (matches.length !== 1) return result({ problem: `\`env ${text}\` is not an option the guard knows` });
      const option = matches[0]!;
      const takesValue = ['--unset', '--chdir', '--split-string', '--argv0', '--block-signal', '--default-signal', '--ignore-signal'].includes(option);
      const value = inline !== undefined ? { ...arg, text: inline } : takesValue ? args[++i] : undefined;
      if (option === '--chdir') cwd = value;
      if (option === '--split-string') split = value;
      if (option === '--argv0') return result({ problem: '`env --argv0` runs a program under another name' });
      continue;
    }
    if (text.startsWith('-') && text !== '-') {
      for (let j = 1; j < text.length; j++) {
        const flag = text[j]!;
        if ('i0v'.includes(flag)) continue;
        if ('uCSa'.includes(flag)) {
          const inline = text.slice(j + 1);
          const value = inline !== '' ? { ...arg, text: inline } : args[++i];
          if (flag === 'C') cwd = value;
          if (flag === 'S') split = value;
          if (flag === 'a') return result({ problem: '`env -a` runs a program under another name' });
          break;
        }
        return result({ problem: `\`env -${flag}\` is not an option the guard knows` });
      }
      if (split !== undefined) break;
      continue;
    }
    const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(text);
    if (assignment === null) break;
    assignments.set(assignment[1]!, [{ text: assignment[2]!, glob: null, ...(arg.unknown ? { unknown: arg.unknown } : {}) }]);
  }
  const where = cwd ? { cwd } : {};
  if (split !== undefined) {
    if (split.unknown !== undefined) return result({ problem: '`env -S` splits a string the guard cannot read', ...where });
    // -S splits its string into the command and its first arguments; the rest follow.
    return result({ scripts: [[split.text, ...args.slice(i + 1).map((a) => a.text)].join(' ')], ...where });
  }
  return result({ commands: i < args.length ? [args.slice(i)] : [], ...where });
}

function unwrapShell(name: string, args: Args): Unwrapped | null {
  const result: Unwrapped = { wrapper: `${name} -c`, commands: [], scripts: [], assignments: new Map() };
  // An interactive or login shell reads start-up files; -O and --rcfile change what runs.
  const startup = args.findIndex((arg) => /^(-[a-zA-Z]*[il][a-zA-Z]*|--login|--rcfile|--init-file|-O|\+O|--interactive)$/.test(arg.text) || arg.text.startsWith('--rcfile=') || arg.text.startsWith('--init-file='));
  const scriptAt = args.findIndex((arg) => !arg.text.startsWith('-') && !arg.text.startsWith('+'));
  if (startup !== -1 && (scriptAt === -1 || startup < scriptAt)) result.problem = `\`${name} ${args[startup]!.text}\` reads start-up files or options that can run anything`;
  for (let i = 0; i < args.length; i++) {
    const text = args[i]!.text;
    if (text === '-c' || (/^-[a-zA-Z]*c[a-zA-Z]*$/.test(text) && !text.startsWith('--'))) {
      // `bash -c -- 'cmd'`: the -- ends options; the script comes after it.
      const script = args[i + 1]?.text === '--' ? args[i + 2] : args[i + 1];
      if (script === undefined) return result;
      if (script.unknown !== undefined) return { ...result, problem: `\`${name} -c\` runs a string the guard cannot read` };
      return { ...result, scripts: [script.text] };
    }
    if (text === '-o' || text === '+o' || text === '-O' || text === '+O' || text === '--rcfile' || text === '--init-file') {
      i += 1;
      continue;
    }
    if (!text.startsWith('-') && !text.startsWith('+')) return result.problem ? result : null;
  }
  return result.problem ? result : null;
}

function unwrapWatch(args: Args): Unwrapped {
  const rest = skipOptions(args, new Set(['-n', '--interval', '-q', '--equexit', '-s', '--shotsdir']));
  const own = args.slice(0, args.length - rest.length);
  const execMode = own.some((arg) => arg.text === '--exec' || /^-[a-zA-Z]*x[a-zA-Z]*$/.test(arg.text));
  if (execMode) return { wrapper: 'watch', commands: [rest], scripts: [], assignments: new Map() };
  if (rest.some((arg) => arg.unknown !== undefined)) return { wrapper: 'watch', commands: [], scripts: [], assignments: new Map(), problem: '`watch` runs a command the guard cannot read' };
  return { wrapper: 'watch', commands: [], scripts: [rest.map((arg) => arg.text).join(' ')], assignments: new Map() };
}

function unwrapXargs(args: Args): Unwrapped {
  const withValue = new Set(['-d', '-E', '-I', '-L', '-n', '-P', '-s', '-a', '--delimiter', '--eof', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--arg-file', '--replace']);
  const replace = valueOf(args, ['-I', '--replace'])?.text ?? (args.some((arg) => arg.text === '-i') ? '{}' : undefined);
  let command = skipOptions(args, withValue);
  if (command.length === 0) command = [{ text: 'echo', glob: null }];
  const input = unknownValue('arguments xargs reads from its input');
  const inner = replace === undefined ? [...command, input] : command.map((arg) => (arg.text.includes(replace) ? input : arg));
  return { wrapper: 'xargs', commands: [inner], scripts: [], assignments: new Map() };
}

const FIND_EXEC = new Set(['-exec', '-execdir', '-ok', '-okdir']);

function unwrapFind(args: Args): Unwrapped | null {
  const roots: Args = [];
  for (const arg of args) {
    if (arg.text.startsWith('-') || arg.text === '(' || arg.text === '!') break;
    roots.push(arg);
  }
  if (roots.length === 0) roots.push({ text: '.', glob: null });
  const commands: Args[] = [];
  for (let i = 0; i < args.length; i++) {
    if (!FIND_EXEC.has(args[i]!.text)) continue;
    let j = i + 1;
    const template: Args = [];
    for (; j < args.length; j++) {
      const text = args[j]!.text;
      if (text === ';' || (text === '+' && args[j - 1]?.text === '{}')) break;
      template.push(args[j]!);
    }
    // `{}` is any file under a root: judged as the root taken whole.
    for (const root of roots) {
      commands.push(template.map((arg) => (arg.text === '{}' ? { ...root, subtree: true } : arg.text.includes('{}') ? unknownValue('a file that find found') : arg)));
    }
    i = j;
  }
  if (commands.length === 0) return null;
  // -execdir and -okdir run the command in each found file's directory, which is known only then.
  const elsewhere = args.some((arg) => arg.text === '-execdir' || arg.text === '-okdir');
  return { wrapper: 'find -exec', commands, scripts: [], assignments: new Map(), ...(elsewhere ? { cwd: unknownValue('the directory of each file find finds') } : {}) };
}

/** `git -C dir -c k=v --no-pager push` runs `git push` in `dir`: the subcommand is what rules judge. */
function unwrapGit(args: Args): Unwrapped | null {
  let i = 1;
  let cwd: WordValue | undefined;
  let touched = false;
  for (; i < args.length; i++) {
    const arg = args[i]!;
    const text = arg.text;
    if (!text.startsWith('-')) break;
    touched = true;
    if (text === '-C') {
      const dir = args[i + 1];
      cwd = dir === undefined ? undefined : cwd && dir.unknown === undefined && !dir.text.startsWith('/') ? { ...dir, text: `${cwd.text}/${dir.text}` } : dir;
      i += 1;
    } else if (GIT_OPTIONS_WITH_VALUE.has(text)) {
      i += 1;
    }
  }
  if (!touched) return null;
  return { wrapper: 'git', commands: [[args[0]!, ...args.slice(i)]], scripts: [], assignments: new Map(), ...(cwd ? { cwd } : {}) };
}
