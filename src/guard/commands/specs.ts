import type { OptionSpec } from './options.js';

/**
 * What the options of a known command do. Long options are listed in full, so an
 * abbreviation resolves the way getopt_long resolves it and an option the guard does
 * not know makes the command unknown rather than silently safe.
 */
export interface CommandSpec extends OptionSpec {
  /** What the operands are: files it reads, names it lists, or not files at all. */
  operands: 'read' | 'list' | 'none';
  /** Options whose value is a file it reads. */
  reads?: readonly string[];
  /** Options whose value is a file it writes. */
  writes?: readonly string[];
  /** Options that run another program or load code: the command is then not known. */
  runs?: readonly string[];
  /**
   * Options that make it read files no argument names (a list of names, a tags file, a
   * checksum list) or write files no argument names: the command is then not known.
   */
  indirect?: readonly string[];
  /** Options that make the operands read for their content rather than only looked at (`file -m magic`). */
  readsOperands?: readonly string[];
  /** Why an operand is not a file but an instruction (`less +!cmd`, `strings @file`), or null. */
  operandCommand?: (text: string) => string | null;
  /** Flags that make it take directory operands whole. */
  recursive?: readonly string[];
}

// `-c list` reads every file the list names, which no argument shows.
const CHECKSUM: CommandSpec = { operands: 'read', long: ['--binary', '--check', '--tag', '--text', '--zero', '--ignore-missing', '--quiet', '--status', '--strict', '--warn'], indirect: ['-c', '--check'] };

/**
 * less and more run a `+cmd` operand as keystrokes at start: `+!cmd` runs a shell
 * command, `+s file`/`+o` write a log, `+:e file` opens another file. Only a line
 * number, a jump to the end or start, follow mode or a plain search is known.
 */
function pagerCommand(text: string): string | null {
  if (!text.startsWith('+')) return null;
  return /^\+(\d+|[gGF]|\/[\x20-\x7e]*)$/.test(text) && !/[!|]/.test(text) ? null : `the start command \`${text}\` may run a shell command or open files the guard does not see`;
}

export const SPECS: Record<string, CommandSpec> = {
  cat: { operands: 'read', long: ['--show-all', '--number-nonblank', '--show-ends', '--number', '--squeeze-blank', '--show-tabs', '--show-nonprinting'] },
  tac: { operands: 'read', value: ['-s', '--separator'], long: ['--before', '--regex'] },
  nl: {
    operands: 'read',
    value: ['-b', '-d', '-f', '-h', '-i', '-l', '-n', '-s', '-v', '-w', '--body-numbering', '--section-delimiter', '--footer-numbering', '--header-numbering', '--line-increment', '--join-blank-lines', '--number-format', '--number-separator', '--starting-line-number', '--number-width'],
    long: ['--no-renumber'],
  },
  head: { operands: 'read', value: ['-n', '-c', '--lines', '--bytes'], long: ['--quiet', '--silent', '--verbose', '--zero-terminated'] },
  tail: {
    operands: 'read',
    value: ['-n', '-c', '-s', '--lines', '--bytes', '--pid', '--sleep-interval', '--max-unchanged-stats'],
    long: ['--quiet', '--silent', '--verbose', '--zero-terminated', '--follow', '--retry'],
  },
  // --files0-from reads every file the list names.
  wc: { operands: 'read', value: ['--files0-from', '--total'], long: ['--bytes', '--chars', '--lines', '--max-line-length', '--words'], indirect: ['--files0-from'] },
  // A lesskey file can set LESSOPEN, which runs a command on every file; a tags file names the files to open.
  less: {
    operands: 'read',
    value: ['-o', '-O', '--log-file', '--LOG-FILE', '-k', '--lesskey-file', '--lesskey-src', '--lesskey-content', '-p', '--pattern', '-t', '--tag', '-T', '--tag-file', '-x', '--tabs', '-y', '-z', '-b', '-h', '-j', '-P', '-D', '-#'],
    long: [],
    writes: ['-o', '-O', '--log-file', '--LOG-FILE'],
    runs: ['-k', '--lesskey-file', '--lesskey-src', '--lesskey-content'],
    indirect: ['-t', '--tag', '-T', '--tag-file'],
    operandCommand: pagerCommand,
  },
  more: { operands: 'read', value: ['-n', '--lines'], long: ['--silent', '--logical', '--no-pause', '--print-over', '--clean-print', '--squeeze', '--plain'], operandCommand: pagerCommand },
  cut: {
    operands: 'read',
    value: ['-b', '-c', '-d', '-f', '--bytes', '--characters', '--delimiter', '--fields', '--output-delimiter'],
    long: ['--complement', '--only-delimited', '--zero-terminated'],
  },
  paste: { operands: 'read', value: ['-d', '--delimiters'], long: ['--serial', '--zero-terminated'] },
  join: { operands: 'read', value: ['-a', '-e', '-j', '-o', '-t', '-v', '-1', '-2'], long: ['--ignore-case', '--check-order', '--nocheck-order', '--header', '--zero-terminated'] },
  comm: { operands: 'read', value: ['--output-delimiter'], long: ['--check-order', '--nocheck-order', '--total', '--zero-terminated'] },
  fold: { operands: 'read', value: ['-w', '--width'], long: ['--bytes', '--spaces'] },
  column: { operands: 'read', value: ['-c', '-s', '-o', '-N', '-R', '-W', '-H', '-O', '-E', '--columns', '--separator', '--output-separator', '--table-columns', '--table-right', '--table-wrap', '--table-hide', '--table-order', '--table-noextreme', '--table-name'], long: ['--table', '--fillrows', '--json', '--keep-empty-lines', '--table-noheadings'] },
  expand: { operands: 'read', value: ['-t', '--tabs'], long: ['--initial'] },
  unexpand: { operands: 'read', value: ['-t', '--tabs'], long: ['--all', '--first-only'] },
  fmt: { operands: 'read', value: ['-w', '-g', '-p', '--width', '--goal', '--prefix'], long: ['--crown-margin', '--tagged-paragraph', '--split-only', '--uniform-spacing'] },
  rev: { operands: 'read', long: [] },
  od: {
    operands: 'read',
    value: ['-A', '-j', '-N', '-t', '--address-radix', '--endian', '--skip-bytes', '--read-bytes', '--format'],
    optional: ['-S', '-w', '--strings', '--width'],
    long: ['--output-duplicates', '--traditional'],
  },
  hexdump: { operands: 'read', value: ['-e', '-f', '-n', '-s', '--format', '--format-file', '--length', '--skip'], optional: ['--color'], long: ['--one-byte-octal', '--one-byte-char', '--canonical', '--two-bytes-decimal', '--two-bytes-octal', '--two-bytes-hex', '--no-squeezing'], reads: ['-f', '--format-file'] },
  hd: { operands: 'read', value: ['-e', '-f', '-n', '-s'], long: [], reads: ['-f'] },
  // binutils reads `@file` as more arguments, files to read among them.
  strings: { operands: 'read', value: ['-n', '-t', '-e', '-s', '-T', '--bytes', '--radix', '--encoding', '--output-separator', '--target'], long: ['--all', '--print-file-name', '--include-all-whitespace'], operandCommand: (text) => (text.startsWith('@') ? `\`strings ${text}\` reads more arguments from a file` : null) },
  md5sum: CHECKSUM,
  sha1sum: CHECKSUM,
  sha224sum: CHECKSUM,
  sha256sum: CHECKSUM,
  sha384sum: CHECKSUM,
  sha512sum: CHECKSUM,
  b2sum: { ...CHECKSUM, value: ['-l', '--length'] },
  cksum: { ...CHECKSUM, value: ['-a', '-l', '--algorithm', '--length'], long: [...(CHECKSUM.long ?? []), '--base64', '--raw', '--untagged', '--debug'] },
  sum: { operands: 'read', long: ['--sysv'] },
  base64: { operands: 'read', value: ['-w', '--wrap'], long: ['--decode', '--ignore-garbage'] },
  base32: { operands: 'read', value: ['-w', '--wrap'], long: ['--decode', '--ignore-garbage'] },
  cmp: { operands: 'read', value: ['-i', '-n', '--ignore-initial', '--bytes'], long: ['--print-bytes', '--verbose', '--quiet', '--silent'] },
  iconv: { operands: 'read', value: ['-f', '-t', '-o', '--from-code', '--to-code', '--output'], long: ['--list', '--silent'], writes: ['-o', '--output'] },
  ls: {
    operands: 'list',
    value: ['-I', '-T', '-w', '--block-size', '--format', '--hide', '--ignore', '--indicator-style', '--quoting-style', '--sort', '--time', '--time-style', '--tabsize', '--width'],
    optional: ['--color', '--hyperlink'],
    long: ['--all', '--almost-all', '--author', '--escape', '--ignore-backups', '--directory', '--dired', '--classify', '--file-type', '--full-time', '--group-directories-first', '--no-group', '--human-readable', '--si', '--dereference-command-line', '--dereference-command-line-symlink-to-dir', '--dereference', '--inode', '--kibibytes', '--literal', '--numeric-uid-gid', '--hide-control-chars', '--show-control-chars', '--quote-name', '--reverse', '--recursive', '--size', '--context', '--zero'],
    recursive: ['-R', '--recursive'],
  },
  // -R runs tree again in every directory with `-o 00Tree.html`; --fromfile (unknown here) reads listings from files.
  tree: { operands: 'list', value: ['-L', '-P', '-I', '-o', '-H', '-T', '--filelimit', '--charset', '--timefmt', '--sort'], long: ['--noreport', '--dirsfirst', '--filesfirst', '--prune', '--du', '--si', '--inodes', '--device', '--gitignore', '--matchdirs', '--ignore-case'], writes: ['-o'], recursive: [], indirect: ['-R'] },
  du: {
    operands: 'list',
    value: ['-B', '-d', '-t', '-X', '--block-size', '--max-depth', '--threshold', '--time-style', '--files0-from', '--exclude-from', '--exclude'],
    optional: ['--time'],
    long: ['--all', '--apparent-size', '--bytes', '--total', '--dereference-args', '--human-readable', '--inodes', '--dereference', '--count-links', '--no-dereference', '--separate-dirs', '--si', '--summarize', '--one-file-system', '--null'],
    reads: ['--files0-from', '-X', '--exclude-from'],
  },
  stat: { operands: 'list', value: ['-c', '--format', '--printf', '--cached'], long: ['--dereference', '--file-system', '--terse'] },
  file: {
    operands: 'list',
    value: ['-e', '-f', '-F', '-m', '-P', '--exclude', '--exclude-quiet', '--files-from', '--separator', '--magic-file', '--parameter'],
    long: ['--compile', '--brief', '--mime', '--mime-type', '--mime-encoding', '--keep-going', '--dereference', '--no-dereference', '--no-pad', '--print0', '--preserve-date', '--raw', '--special-files', '--uncompress', '--uncompress-noreport', '--extension', '--apple', '--no-buffer'],
    // A magic file can print what it matches, so the files are read, not only looked at; a names file lists more files.
    reads: ['-m', '--magic-file'],
    readsOperands: ['-m', '--magic-file'],
    indirect: ['-f', '--files-from'],
    runs: ['-z', '-Z', '-C', '--uncompress', '--uncompress-noreport', '--compile'],
  },
  realpath: { operands: 'list', value: ['--relative-to', '--relative-base'], long: ['--canonicalize-existing', '--canonicalize-missing', '--logical', '--physical', '--quiet', '--strip', '--no-symlinks', '--zero'] },
  readlink: { operands: 'list', long: ['--canonicalize', '--canonicalize-existing', '--canonicalize-missing', '--no-newline', '--quiet', '--silent', '--verbose', '--zero'] },
  namei: { operands: 'list', long: ['--mountpoints', '--modes', '--owners', '--long', '--nosymlinks', '--vertical'] },
};
