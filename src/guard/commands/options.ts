import type { WordValue } from '../shell/words.js';

export interface OptionSpec {
  /** Options that take a value: `-n 5`, `-n5`, `--lines=5`, `--lines 5`. */
  value?: readonly string[];
}

export interface ParsedArgs {
  /** Every option as written (`-rn`, `--include=*.js`), with its value when it takes one. */
  options: { name: string; value?: WordValue }[];
  operands: WordValue[];
}

/** Splits argv (without argv[0]) into options and operands the way getopt_long does, `--` included. */
export function parseArgs(args: WordValue[], spec: OptionSpec = {}): ParsedArgs {
  const withValue = new Set(spec.value ?? []);
  const parsed: ParsedArgs = { options: [], operands: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const text = arg.text;
    if (arg.unknown !== undefined || !text.startsWith('-') || text === '-') {
      parsed.operands.push(arg);
      continue;
    }
    if (text === '--') {
      parsed.operands.push(...args.slice(i + 1));
      break;
    }
    if (text.startsWith('--')) {
      const eq = text.indexOf('=');
      if (eq !== -1) parsed.options.push({ name: text.slice(0, eq), value: { ...arg, text: text.slice(eq + 1) } });
      else if (withValue.has(text)) {
        const value = args[i + 1];
        parsed.options.push(value ? { name: text, value } : { name: text });
        i += 1;
      } else parsed.options.push({ name: text });
      continue;
    }
    // A cluster of short flags; the first one that takes a value eats the rest, or the next word.
    for (let j = 1; j < text.length; j++) {
      const name = `-${text[j]}`;
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
