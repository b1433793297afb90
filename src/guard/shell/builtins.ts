import { arithmeticTextRuns, nameRuns } from './hazards.js';
import { changeDirectory, cloneState, type ShellState } from './state.js';
import type { WordValue } from './words.js';

export interface BuiltinContext {
  home: string | null;
  problem(text: string): void;
  /** Analyses a literal script the builtin runs (`eval`, `trap`), with `label` added to its wrappers. */
  runs(script: string, label: string): void;
  /** A variable the builtin assigns, with the values it may get (null: not known): judged like any assignment. */
  assigned(name: string, values: WordValue[] | null, state: ShellState): void;
}

const CODE_IN_NAME = 'a subscript is arithmetic that can run code';

/**
 * What a builtin that changes the shell does to the analysis state: `cd` and the
 * directory stack, variables that `read`, `printf -v` and friends assign, scripts that
 * `eval` and `trap` run, and builtins that change how later words are read. Returns
 * undefined for any other command.
 */
export function applyBuiltin(name: string, args: WordValue[], state: ShellState, context: BuiltinContext): ShellState | undefined {
  switch (name) {
    case 'cd':
    case 'pushd':
      return changeDir(name, args, state, context);
    case 'popd': {
      if (args.length > 0) context.problem('`popd` with arguments moves through the directory stack in ways the guard does not follow');
      const next = cloneState(state);
      next.cwds = args.length > 0 ? [null] : (next.dirStack.pop() ?? [null]);
      return next;
    }
    case 'printf': {
      // `-v NAME` or `-vNAME`; an unknown first argument may be either.
      const target = optionValue(args, 'v', 'v');
      if (target === null) return state;
      return assigns([target], state, context, '`printf -v`');
    }
    case 'read':
    case 'mapfile':
    case 'readarray':
    case 'getopts': {
      // mapfile -C runs a callback; any name with a subscript is arithmetic that can run code.
      if ((name === 'mapfile' || name === 'readarray') && args.some((arg) => /^-[^-]*C/.test(arg.text))) context.problem('`mapfile -C` runs a callback the guard cannot read');
      const names = args.filter((arg) => !arg.text.startsWith('-'));
      const next = assigns(name === 'getopts' ? names.slice(1, 2) : names, state, context, `\`${name}\``);
      if (name === 'read') next.vars.set('REPLY', null);
      return next;
    }
    case 'unset': {
      const next = cloneState(state);
      for (const operand of operands(args)) {
        if (operand.unknown !== undefined || nameRuns(operand.text)) context.problem(`\`unset\` is given a name the guard cannot follow (${CODE_IN_NAME})`);
        else next.vars.set(operand.text.replace(/\[.*$/, ''), null);
      }
      return next;
    }
    case 'wait': {
      // `wait -n -p NAME` assigns the id of the job that ended to NAME.
      const target = optionValue(args, 'p', 'p');
      if (target === null) return state;
      return assigns([target], state, context, '`wait -p`');
    }
    case 'declare':
    case 'typeset':
    case 'local':
    case 'export':
    case 'readonly':
      return declares(name, args, state, context);
    case 'let':
      if (args.length === 0 || args.some((arg) => arg.unknown !== undefined || arithmeticTextRuns(arg.text))) context.problem('`let` evaluates arithmetic on variables, which can run code the guard cannot see');
      return state;
    case 'compgen':
      // -W expands its word list, -C and -F run a command or function, right away.
      if (['W', 'C', 'F'].some((flag) => optionValue(args, flag, 'oAGWFCXPS') !== null)) context.problem('`compgen -W`, `-C` or `-F` expands or runs text as code');
      return state;
    case 'test':
    case '[':
      if (args.some((arg) => arg.text === '-v')) context.problem('`test -v` evaluates a subscript, which can run code');
      return state;
    case 'eval':
      context.problem('`eval` runs text the guard can only guess at');
      if (args.every((arg) => arg.unknown === undefined)) context.runs(args.map((arg) => arg.text).join(' '), 'eval');
      return state;
    case 'trap': {
      const action = args.find((arg) => !arg.text.startsWith('-'));
      if (action && action.unknown === undefined) context.runs(action.text, 'trap');
      else if (action) context.problem('`trap` installs a command the guard cannot read');
      return state;
    }
    case 'shopt':
      if (args.some((arg) => arg.text === '-s')) context.problem('`shopt -s` changes how bash expands words');
      return state;
    case 'set': {
      // Only options that stop or trace a script are harmless; -k, -H, -P, -B and the
      // like change how later words are read or where cd goes.
      for (let i = 0; i < args.length; i++) {
        const text = args[i]!.text;
        if (text === '--' || text === '-') break;
        if (text === '-o' || text === '+o') {
          const option = args[i + 1]?.text ?? '';
          if (!['errexit', 'nounset', 'pipefail', 'xtrace', 'verbose', 'noglob', 'noclobber', 'noexec'].includes(option)) context.problem(`\`set ${text} ${option}\` changes how bash reads what follows`);
          i += 1;
          continue;
        }
        if (/^[-+]/.test(text) && /[^euxvfnC]/.test(text.slice(1))) context.problem(`\`set ${text}\` changes how bash reads what follows`);
        if (!/^[-+]/.test(text)) break;
      }
      return state;
    }
    case 'hash':
      if (args.some((arg) => /^-[^-]*p/.test(arg.text))) context.problem('`hash -p` makes a name run another program');
      return state;
    case 'enable':
    case 'alias':
      if (name === 'enable') context.problem('`enable` loads or hides builtins');
      return state;
    default:
      return undefined;
  }
}

/** Names a builtin assigns values read from input or a format: not known, so an integer variable among them is code. */
function assigns(targets: (WordValue | undefined)[], state: ShellState, context: BuiltinContext, what: string): ShellState {
  const next = cloneState(state);
  for (const target of targets) {
    if (target === undefined) continue;
    if (target.unknown !== undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(target.text)) {
      context.problem(`${what} assigns a name the guard cannot follow (${CODE_IN_NAME})`);
      continue;
    }
    context.assigned(target.text, null, state);
    next.vars.set(target.text, null);
  }
  return next;
}

/**
 * `declare`, `typeset`, `local`, `export` and `readonly` reached as a command (behind
 * `command` or `builtin`, or spelled in quotes), judged as the grammar's declarations
 * are: options but -r, -x, -g, -p are not followed, names must be plain, and each
 * value is an assignment (arithmetic for an integer variable).
 */
function declares(name: string, args: WordValue[], state: ShellState, context: BuiltinContext): ShellState {
  const next = cloneState(state);
  let integer = false;
  let i = 0;
  for (; i < args.length; i++) {
    const text = args[i]!.text;
    if (args[i]!.unknown !== undefined) break;
    if (text === '--') {
      i += 1;
      break;
    }
    if (!/^[-+]./.test(text)) break;
    if (/[^rxgp]/.test(text.slice(1))) context.problem(`\`${name} ${text}\` declares names, integers, arrays or functions the guard cannot follow`);
    if (text.startsWith('-') && text.includes('i')) integer = true;
  }
  for (const operand of args.slice(i)) {
    if (operand.unknown !== undefined) {
      context.problem(`\`${name}\` declares a variable the guard cannot follow`);
      continue;
    }
    const equals = operand.text.indexOf('=');
    const target = (equals === -1 ? operand.text : operand.text.slice(0, equals)).replace(/\+$/, '');
    if (nameRuns(target)) {
      context.problem(`\`${name}\` is given a name the guard cannot follow (${CODE_IN_NAME})`);
      continue;
    }
    if (integer) next.integers.add(target);
    if (equals === -1) continue;
    const values = [{ text: operand.text.slice(equals + 1), glob: null }];
    context.assigned(target, values, next);
    next.vars.set(target, operand.text[equals - 1] === '+' ? null : values);
  }
  return next;
}

/** Operands after a builtin's leading options (`-f`, `-v`, `--`). */
function operands(args: WordValue[]): WordValue[] {
  let i = 0;
  while (i < args.length && args[i]!.unknown === undefined && /^-./.test(args[i]!.text)) {
    if (args[i]!.text === '--') return args.slice(i + 1);
    i += 1;
  }
  return args.slice(i);
}

/**
 * The value of a builtin's short option `flag` as its getopt reads it (`-p NAME`,
 * `-pNAME`, `-np NAME`), or null when it is not given; `withValue` are the options that
 * take a value, skipped with it. An argument the guard cannot read may be the option,
 * so it counts as given, with an unknown value (a number bash sets, `$!`, cannot).
 */
function optionValue(args: WordValue[], flag: string, withValue: string): WordValue | null {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg.unknown !== undefined) return arg.numeric ? null : arg;
    if (arg.text === '--' || !/^-./.test(arg.text)) return null;
    for (let j = 1; j < arg.text.length; j++) {
      const letter = arg.text[j]!;
      if (letter !== flag && !withValue.includes(letter)) continue;
      const inline = arg.text.slice(j + 1);
      const value = inline !== '' ? { ...arg, text: inline } : (args[i + 1] ?? { text: '', glob: null });
      if (letter === flag) return value;
      if (inline === '') i += 1;
      break;
    }
  }
  return null;
}

/** `cd` and `pushd` as bash does them (logical paths); what the guard cannot follow makes the directory unknown. */
function changeDir(name: 'cd' | 'pushd', args: WordValue[], state: ShellState, context: BuiltinContext): ShellState {
  const next = cloneState(state);
  let physical = false;
  let operands = args;
  while (operands[0] && /^-[LPe@]+$/.test(operands[0].text)) {
    if (operands[0].text.includes('P')) physical = true;
    operands = operands.slice(1);
  }
  if (operands[0]?.text === '--') operands = operands.slice(1);
  const target = operands[0];
  if (name === 'pushd') {
    if (target !== undefined && /^(-n|[+-]\d+)$/.test(target.text)) {
      context.problem('`pushd` with -n or a stack index moves through the stack in ways the guard does not follow');
      next.cwds = [null];
      return next;
    }
    next.dirStack.push([...state.cwds]);
  }
  // With CDPATH set, `cd etc` may go to any directory on it; `cd -P` resolves symlinks first.
  const viaCdPath = state.vars.has('CDPATH') && target !== undefined && !/^(\/|\.\.?(\/|$))/.test(target.text);
  let success: (string | null)[];
  if (target?.text === '-' || (name === 'pushd' && target === undefined) || viaCdPath || physical) success = [null];
  else success = changeDirectory(state, target ? [target] : context.home ? [{ text: context.home, glob: null }] : null, state.cwds);
  // A cd can fail; what follows with `;` may run in either place.
  next.cwds = [...new Set([...success, ...state.cwds])];
  next.outcome = { success, failure: state.cwds };
  return next;
}
