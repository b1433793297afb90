import { makeVisible } from '../text/visible.js';

// The end of a failed command's output, for a person to see the cause without opening a
// file: its last lines, each made visible and cut to the terminal's width, so a flood of
// output or one endless line (minified code, a progress bar) cannot take the screen.

/** How many of the last lines a summary shows. */
export const TAIL_LINES = 12;
/** The width assumed when the output is no terminal (a CI log, a file). */
export const DEFAULT_WIDTH = 120;

// Colours and cursor moves: a summary is coloured by corral, not by the command.
const ESCAPE_SEQUENCE = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/**
 * The last `lines` lines of `output`, each at most `width` characters (cut with `…`),
 * with a first line saying how many earlier lines were left out. A carriage return
 * (a progress bar redrawn) keeps what was drawn last.
 */
export function outputTail(output: string, options: { lines?: number; width: number }): string[] {
  const keep = options.lines ?? TAIL_LINES;
  const width = Math.max(20, options.width);
  const all = output
    .replace(ESCAPE_SEQUENCE, '')
    .replace(/\s+$/, '')
    .split('\n')
    .map((line) => line.replace(/\r$/, '').split('\r').at(-1)!.replace(/\t/g, '  '));
  if (all.length === 1 && all[0] === '') return [];
  const shown = all.slice(-keep).map((line) => cut(makeVisible(line), width));
  const left = all.length - shown.length;
  return left > 0 ? [`… ${left} earlier line${left === 1 ? '' : 's'}`, ...shown] : shown;
}

function cut(line: string, width: number): string {
  const chars = Array.from(line);
  return chars.length <= width ? line : `${chars.slice(0, width - 1).join('')}…`;
}
