import { parseArgs } from './options.js';
import { unknownOption, type Known, type Unknown, type CommandEffects } from './types.js';
import type { WordValue } from '../shell/words.js';

// Package managers run code (scripts, install hooks, the packages themselves): only the
// subcommands that print what is installed, and run nothing, are known here.
const LISTING = new Set(['ls', 'list', 'll', 'la']);
const LIST_OPTIONS = {
  value: ['--depth', '--omit', '--include', '-w', '--workspace'],
  long: ['--all', '--json', '--long', '--parseable', '--global', '--link', '--package-lock-only', '--workspaces', '--include-workspace-root', '--no-unicode', '--unicode', '--production', '--dev', '--no-color', '--color'],
};

/** `npm ls`, `npm list`: what is installed, read from node_modules and the lock file. */
export function npmEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const sub = rest[0];
  if (sub === undefined || sub.unknown !== undefined || !LISTING.has(sub.text)) return unknown('`npm` runs package scripts and installs code');
  const parsed = parseArgs(rest.slice(1), { ...LIST_OPTIONS, long: [...LIST_OPTIONS.long, '-a', '-l', '-p', '-g'] });
  if (parsed.unknown.length > 0) return unknown(unknownOption(`npm ${sub.text}`, parsed.unknown[0]!));
  return known([]);
}
