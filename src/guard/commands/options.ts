import type { WordValue } from '../shell/words.js';

/** What `unknown` holds for an argument whose value is not known before the command runs. */
export const UNKNOWN_ARGUMENT = 'an argument not known before it runs';

export interface OptionSpec {
  /** Options that take a value: `-n 5`, `-n5`, `--lines=5`, `--lines 5`. */
  value?: readonly string[];
  /**
   * Every long flag the command has (besides those in `value`). When given, a long
   * option is read as getopt_long reads it, any unambiguous prefix of a known one
   * (`--out=x` is `--output=x`), and one that matches none is reported as unknown.
   */
  long?: readonly string[];
  /** Options whose value is optional: it is theirs only when attached (`--color=auto`, `-w16`), never the next word. */
  optional?: readonly string[];
}

export interface ParsedArgs {
  /** Every option as written (`-rn`, `--include=*.js`), with its value when it takes one. */
  options: { name: string; value?: WordValue }[];
  operands: WordValue[];
  /** Long options the spec does not know, or abbreviations that match several. */
  unknown: string[];
}

/** Splits argv (without argv[0]) into options and operands the way getopt_long does, `--` included. */
export function parseArgs(args: WordValue[], spec: OptionSpec = {}): ParsedArgs {
  const withValue = new Set(spec.value ?? []);
  const optional = new Set(spec.optional ?? []);
  const known = spec.long === undefined ? undefined : [...spec.long, ...(spec.value ?? []).filter((name) => name.startsWith('--')), ...(spec.optional ?? []).filter((name) => name.startsWith('--')), '--help', '--version'];
  const parsed: ParsedArgs = { options: [], operands: [], unknown: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const text = arg.text;
    if (arg.unknown !== undefined) {
      // It may turn out to be an option (`grep $(echo -r) x .`): nothing about the command is certain.
      parsed.operands.push(arg);
      parsed.unknown.push(UNKNOWN_ARGUMENT);
      continue;
    }
    if (!text.startsWith('-') || text === '-') {
      parsed.operands.push(arg);
      continue;
    }
    if (text === '--') {
      parsed.operands.push(...args.slice(i + 1));
      break;
    }
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      const given = eq === -1 ? text : text.slice(0, eq);
      const name = known === undefined ? given : resolveLong(given, known);
      if (name === null) {
        parsed.unknown.push(given);
        continue;
      }
      if (eq !== -1) parsed.options.push({ name, value: { ...arg, text: text.slice(eq + 1) } });
      else if (withValue.has(name) && !optional.has(name)) {
        const value = args[i + 1];
        parsed.options.push(value ? { name, value } : { name });
        i += 1;
      } else parsed.options.push({ name });
      continue;
    }
    // A cluster of short flags; the first one that takes a value eats the rest, or the next word.
    for (let j = 1; j < text.length; j++) {
      const name = `-${text[j]}`;
      if (optional.has(name)) {
        const inline = text.slice(j + 1);
        parsed.options.push(inline === '' ? { name } : { name, value: { ...arg, text: inline } });
        break;
      }
      if (!withValue.has(name)) {
        parsed.options.push({ name });
        continue;
      }
      const inline = text.slice(j + 1);
      if (inline !== '') parsed.options.push({ name, value: { ...arg, text: inline } });
      else {
        const value = args[i + 1];
        parsed.options.push(value ? { name, value } : { name });
        i += 1;
      }
      break;
    }
  }
  return parsed;
}

export function hasOption(parsed: ParsedArgs, ...names: string[]): boolean {
  return parsed.options.some((option) => names.includes(option.name));
}

export function optionValues(parsed: ParsedArgs, ...names: string[]): WordValue[] {
  return parsed.options.filter((option) => names.includes(option.name) && option.value).map((option) => option.value!);
}

/** The known long option `given` names: itself, or the one option it is an unambiguous prefix of. */
function resolveLong(given: string, known: readonly string[]): string | null {
  if (known.includes(given)) return given;
  const matches = known.filter((option) => option.startsWith(given));
  return matches.length === 1 ? matches[0]! : null;
}
