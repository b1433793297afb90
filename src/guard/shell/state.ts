import path from 'node:path';
import type { VariableValue, WordValue } from './words.js';

/**
 * What the analysis knows at one point of a script: the directories the shell may be
 * in (null: unknown), the variables it set, and pushd's stack. Branches are merged,
 * so every fact is a set of possibilities, never a guess.
 */
export interface ShellState {
  cwds: (string | null)[];
  vars: Map<string, VariableValue>;
  dirStack: (string | null)[][];
  /** Shell functions defined so far: a call to one is not the command of that name. */
  functions: Set<string>;
  /** Variables with the integer attribute: what is assigned to them is evaluated as arithmetic. */
  integers: Set<string>;
  /**
   * Right after a `cd`: the directories if it worked and if it failed, so `cd x && a`
   * runs `a` in x, `cd x || b` runs `b` where it was, and `cd x; c` may run `c` in either.
   */
  outcome?: { success: (string | null)[]; failure: (string | null)[] };
}

export const MAX_CWDS = 8;

export function cloneState(state: ShellState): ShellState {
  return { cwds: [...state.cwds], vars: new Map(state.vars), dirStack: state.dirStack.map((dirs) => [...dirs]), functions: new Set(state.functions), integers: new Set(state.integers) };
}

/** Any of the states may be the real one afterwards. */
export function mergeStates(states: ShellState[]): ShellState {
  const first = states[0]!;
  const cwds = unique(states.flatMap((state) => state.cwds));
  const vars = new Map<string, VariableValue>();
  const names = new Set(states.flatMap((state) => [...state.vars.keys()]));
  for (const name of names) {
    const values = states.map((state) => state.vars.get(name));
    if (values.some((value) => value === undefined || value === null)) {
      vars.set(name, null);
      continue;
    }
    const merged = uniqueValues(values.flat() as WordValue[]);
    vars.set(name, merged.length > 16 ? null : merged);
  }
  return {
    cwds: cwds.length > MAX_CWDS ? [null] : cwds,
    vars,
    dirStack: first.dirStack,
    functions: new Set(states.flatMap((state) => [...state.functions])),
    integers: new Set(states.flatMap((state) => [...state.integers])),
  };
}

/** The directory after `cd target` from every possible directory (bash's logical cd). */
export function changeDirectory(state: ShellState, target: WordValue[] | null, previous: (string | null)[]): (string | null)[] {
  if (target === null) return [null];
  const next: (string | null)[] = [];
  for (const cwd of previous) {
    for (const value of target) {
      if (value.unknown !== undefined || value.glob !== null) next.push(null);
      else if (path.isAbsolute(value.text)) next.push(path.normalize(value.text));
      else next.push(cwd === null ? null : path.resolve(cwd, value.text));
    }
  }
  const result = unique(next);
  return result.length > MAX_CWDS ? [null] : result;
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

function uniqueValues(values: WordValue[]): WordValue[] {
  const seen = new Map<string, WordValue>();
  for (const value of values) seen.set(`${value.text}\u0000${value.glob ?? ''}\u0000${value.unknown ?? ''}`, value);
  return [...seen.values()];
}
