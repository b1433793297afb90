import type { WordValue } from '../shell/words.js';
import { hasOption, optionValues, parseArgs, UNKNOWN_ARGUMENT } from './options.js';
import { unknownOption, use, type CommandEffects, type Known, type PathUse, type Unknown } from './types.js';

const SED_VALUE = ['-e', '-f', '-l', '--expression', '--file', '--line-length'];
const SED_LONG = ['--quiet', '--silent', '--in-place', '--null-data', '--zero-terminated', '--regexp-extended', '--separate', '--sandbox', '--unbuffered', '--posix', '--debug', '--follow-symlinks', '--binary'];

export function sedEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: SED_VALUE, long: SED_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption('sed', parsed.unknown[0]!));
  const scripts = optionValues(parsed, '-e', '--expression');
  const explicit = hasOption(parsed, '-e', '-f', '--expression', '--file');
  const files = explicit ? parsed.operands : parsed.operands.slice(1);
  if (!explicit && parsed.operands[0]) scripts.push(parsed.operands[0]);
  // `-i`, `-i.bak`, `-ni`, `--in-place=.bak`: the files are rewritten.
  const inPlace = parsed.options.some((option) => option.name === '--in-place' || (!option.name.startsWith('--') && option.name === '-i'));
  const paths: PathUse[] = files.map((value) => use(value, 'read', 'sed file'));
  if (inPlace) paths.push(...files.map((value) => use(value, 'write', 'sed -i file')));
  if (hasOption(parsed, '-f', '--file')) return unknown('`sed -f` runs a script the guard cannot read', [...paths, ...optionValues(parsed, '-f', '--file').map((v) => use(v, 'read', 'sed -f'))]);
  for (const script of scripts) {
    if (script.unknown !== undefined || sedScriptEscapes(script.text)) return unknown('the sed script may write files, read them or run commands (`w`, `W`, `e`, `r`, `R`)', paths);
  }
  return known(paths);
}

/**
 * Whether a sed script can write, read or run anything: the script is read command by
 * command (addresses, `s` and `y` with their delimiters, `a`/`i`/`c` text, labels), and
 * a `w`, `W`, `r`, `R` or `e` command, an `s///w` or `s///e` flag, or anything it cannot
 * read counts as escaping.
 */
export function sedScriptEscapes(script: string): boolean {
  let i = 0;
  const at = (k: number): string => script[k] ?? '';
  const skipDelimited = (delimiter: string, regex = true): boolean => {
    for (; i < script.length; i++) {
      if (at(i) === '\\') i += 1;
      else if (regex && at(i) === '[') {
        // Inside a bracket expression the delimiter does not end the regex (GNU sed).
        let end = i + 1;
        if (at(end) === '^') end += 1;
        if (at(end) === ']') end += 1;
        while (end < script.length && at(end) !== ']') end += at(end) === '[' && /[:.=]/.test(at(end + 1)) ? Math.max(2, script.indexOf(`${at(end + 1)}]`, end + 2) - end + 2) : 1;
        if (end >= script.length) return false;
        i = end;
      } else if (at(i) === delimiter) {
        i += 1;
        return true;
      }
    }
    return false;
  };
  const address = (): boolean => {
    if (/\d/.test(at(i))) while (/[\d~+]/.test(at(i))) i += 1;
    else if (at(i) === '$') i += 1;
    else if (at(i) === '/') {
      i += 1;
      if (!skipDelimited('/')) return false;
      while (/[IM]/.test(at(i))) i += 1;
    } else if (at(i) === '\\') {
      const delimiter = at(i + 1);
      i += 2;
      if (!skipDelimited(delimiter)) return false;
      while (/[IM]/.test(at(i))) i += 1;
    }
    return true;
  };
  while (i < script.length) {
    while (/[\s;{}]/.test(at(i))) i += 1;
    if (i >= script.length) break;
    if (at(i) === '#') {
      while (i < script.length && at(i) !== '\n') i += 1;
      continue;
    }
    if (!address()) return true;
    if (at(i) === ',') {
      i += 1;
      if (!address()) return true;
    }
    while (/[\s!]/.test(at(i))) i += 1;
    const command = at(i);
    i += 1;
    if (command === 's' || command === 'y') {
      const delimiter = at(i);
      i += 1;
      if (delimiter === '' || delimiter === '\n' || delimiter === '\\' || !skipDelimited(delimiter, command === 's') || !skipDelimited(delimiter, false)) return true;
      const flags = /^[a-zA-Z0-9]*/.exec(script.slice(i))![0];
      if (/[weW]/.test(flags)) return true;
      i += flags.length;
    } else if ('aic'.includes(command)) {
      while (i < script.length && at(i) !== '\n') i += at(i) === '\\' ? 2 : 1;
    } else if (':btT'.includes(command)) {
      while (i < script.length && !/[;\n]/.test(at(i))) i += 1;
    } else if ('qQlL'.includes(command)) {
      while (/[\s\d]/.test(at(i)) && at(i) !== '\n') i += 1;
    } else if (!'=dDgGhHnNpPxz{}'.includes(command) || command === '') {
      // w, W, r, R, e and anything unknown.
      return true;
    }
  }
  return false;
}

/**
 * awk: only `-F` and `-v` (and gawk's `-e` program text) are known; every other option
 * loads program files or libraries (`-f`, `-i`, `-l`, `-E`), writes files (gawk's `-o`,
 * `-p`, `-d`) or runs code (mawk's `-W exec`), and makes the command not known.
 */
export function awkEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: ['-F', '-v', '-e', '-f', '-W', '-l', '-i', '-E', '--field-separator', '--assign', '--source', '--file', '--load', '--include', '--exec'], long: ['--posix', '--traditional'] });
  if (parsed.unknown.length > 0) return unknown(`\`${name}\` runs a program the guard cannot read`);
  const other = parsed.options.find((option) => !['-F', '-v', '-e', '--field-separator', '--assign', '--source'].includes(option.name));
  if (other !== undefined) return unknown(`\`${name} ${other.name}\` loads a program or library, writes files or runs code`, optionValues(parsed, '-f', '--file', '-i', '--include', '-E', '--exec').map((v) => use(v, 'read', `${name} ${other.name}`)));
  const inline = optionValues(parsed, '-e', '--source');
  const programs = inline.length > 0 ? inline : parsed.operands.slice(0, 1);
  const files = inline.length > 0 ? parsed.operands : parsed.operands.slice(1);
  if (programs.length === 0 || programs.some((program) => program.unknown !== undefined)) return unknown(`the ${name} program is not known`);
  for (const { text } of programs) {
    // `>` and `|` redirect only print, printf and getline; a comparison like `$1 > 3` is fine.
    const redirects = /\b(print|printf|getline)\b/.test(text) && /[>|]/.test(text);
    if (redirects || /system|getline|fflush|close|ENVIRON|ARGV|ARGC|PROCINFO|@/.test(text)) {
      return unknown(`the ${name} program may run commands, write or pick files, or read the environment`, files.map((v) => use(v, 'read', `${name} file`)));
    }
  }
  return known(files.filter((v) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(v.text)).map((v) => use(v, 'read', `${name} file`)));
}

const JQ_LONG = /^--(slurp|raw-input|null-input|compact-output|tab|color-output|monochrome-output|ascii-output|unbuffered|sort-keys|raw-output|join-output|raw-output0|exit-status|seq|stream|stream-errors|binary)$/;
/** Short flags that only shape jq's input and output; `-f` (a program file) and `-L` (a module path) are not among them. */
const JQ_SHORT = 'nrjascCMSeRhb0';
/** yq (python's, a jq wrapper) adds these; `-i` rewrites files and Go yq's `-s` writes one file per document. */
const YQ_SHORT = 'nrjacCMSeRhyYP';

/**
 * A jq program that names another file: `import "m" as m;`, `include "m";`,
 * `import "data" as $d;` (reads a JSON file from the module search path), or
 * `modulemeta`; yq's `load("file")` family reads any file.
 */
function jqProgramReads(program: string, name: string): boolean {
  if (/(^|[^.\w$])(import|include|modulemeta)\b/.test(program)) return true;
  return name === 'yq' && /\bload\w*\s*\(/.test(program);
}

/**
 * jq's `--arg name value` family take two words; `--slurpfile`/`--rawfile name file`
 * read the file. A program that imports modules or data, a program file (which may),
 * or a module search path make the command not known.
 */
export function jqEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const paths: PathUse[] = [];
  const positional: WordValue[] = [];
  const shortFlags = name === 'yq' ? YQ_SHORT : JQ_SHORT;
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    const text = arg.text;
    if (arg.unknown !== undefined) return unknown(unknownOption(name, UNKNOWN_ARGUMENT));
    if (text === '--') {
      positional.push(...rest.slice(i + 1));
      break;
    }
    if (/^--(arg|argjson|slurpfile|rawfile)$/.test(text)) {
      if (rest[i + 1]?.unknown !== undefined || rest[i + 2]?.unknown !== undefined) return unknown(unknownOption(name, UNKNOWN_ARGUMENT));
      if ((text === '--slurpfile' || text === '--rawfile') && rest[i + 2]) paths.push(use(rest[i + 2]!, 'read', `${name} ${text}`));
      i += 2;
      continue;
    }
    if (text === '--indent') {
      i += 1;
      continue;
    }
    // A program file (which may import), a module path, or arguments read as values: the file or folder named is read all the same.
    const cluster = /^-[a-zA-Z0-9]+$/.test(text) && /[fL]/.test(text);
    if (cluster || text === '--from-file' || text.startsWith('--library-path') || text === '--args' || text === '--jsonargs') {
      const inline = text.startsWith('-L') && text.length > 2 ? { ...arg, text: text.slice(2) } : text.startsWith('--library-path=') ? { ...arg, text: text.slice(15) } : undefined;
      const value = inline ?? (text === '--args' || text === '--jsonargs' ? undefined : rest[i + 1]);
      const named = value === undefined ? [] : [use(value, 'read', `${name} ${text}`, text.includes('L') || text.startsWith('--library'))];
      return unknown(`\`${name} ${text}\` reads a program, modules or arguments the guard does not follow`, [...paths, ...named]);
    }
    if (text.startsWith('--')) {
      if (!JQ_LONG.test(text) || (name === 'yq' && text === '--slurp')) return unknown(unknownOption(name, text));
      continue;
    }
    if (text.startsWith('-') && text !== '-') {
      const other = [...text.slice(1)].find((letter) => !shortFlags.includes(letter));
      if (other !== undefined) return unknown(`\`${name} -${other}\` is not an option the guard knows to only shape output`);
      continue;
    }
    positional.push(arg);
  }
  const [program, ...files] = positional;
  // Go yq takes `eval`/`e` before the expression: every word is looked at as a program.
  if (positional.some((word) => jqProgramReads(word.text, name)) || (program !== undefined && jqProgramReads(program.text, name))) {
    return unknown(`the ${name} program imports modules or data from files the guard does not see`, [...paths, ...files.map((v) => use(v, 'read', `${name} argument`))]);
  }
  return known([...paths, ...files.map((v) => use(v, 'read', `${name} argument`))]);
}

const SORT_VALUE = ['-k', '-t', '-o', '-S', '-T', '--key', '--field-separator', '--output', '--buffer-size', '--temporary-directory', '--parallel', '--files0-from', '--batch-size', '--sort', '--random-source', '--compress-program'];
const SORT_LONG = ['--ignore-leading-blanks', '--dictionary-order', '--ignore-case', '--general-numeric-sort', '--ignore-nonprinting', '--month-sort', '--human-numeric-sort', '--numeric-sort', '--random-sort', '--reverse', '--version-sort', '--debug', '--merge', '--stable', '--unique', '--zero-terminated'];

export function sortEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: SORT_VALUE, optional: ['--check'], long: SORT_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption('sort', parsed.unknown[0]!));
  if (hasOption(parsed, '--compress-program')) return unknown('`sort --compress-program` runs a program');
  // The list names the files sort reads and prints: none of them is an argument the guard sees.
  if (hasOption(parsed, '--files0-from')) return unknown('`sort --files0-from` reads and prints the files a list names', optionValues(parsed, '--files0-from').map((v) => use(v, 'read', 'sort --files0-from')));
  return known([
    ...parsed.operands.map((v) => use(v, 'read', 'sort argument')),
    ...optionValues(parsed, '-o', '--output').map((v) => use(v, 'write', 'sort -o')),
    ...optionValues(parsed, '-T', '--temporary-directory').map((v) => use(v, 'write', 'sort -T', true)),
    ...optionValues(parsed, '--random-source').map((v) => use(v, 'read', 'sort --random-source')),
  ]);
}

/** `uniq [input [output]]`, `xxd [input [output]]`: the second operand is written. */
export function inputOutputEffects(name: string, rest: WordValue[], value: string[], long: string[], known: Known, unknown: Unknown, optional: string[] = []): CommandEffects {
  const parsed = parseArgs(rest, { value, long, optional });
  if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
  const [input, output] = parsed.operands;
  return known([...(input ? [use(input, 'read', `${name} input`)] : []), ...(output ? [use(output, 'write', `${name} output`)] : [])]);
}

const DIFF_VALUE = ['-U', '-C', '-x', '-X', '-I', '-F', '-L', '-W', '-D', '-S', '-o', '--output', '--label', '--exclude', '--exclude-from', '--ignore-matching-lines', '--width', '--show-function-line', '--tabsize', '--line-format', '--old-line-format', '--new-line-format', '--unchanged-line-format', '--old-group-format', '--new-group-format', '--changed-group-format', '--unchanged-group-format', '--horizon-lines', '--starting-file', '--from-file', '--to-file', '--ifdef', '--palette'];
const DIFF_LONG = ['--normal', '--brief', '--report-identical-files', '--ed', '--rcs', '--side-by-side', '--left-column', '--suppress-common-lines', '--show-c-function', '--expand-tabs', '--initial-tab', '--suppress-blank-empty', '--recursive', '--no-dereference', '--new-file', '--unidirectional-new-file', '--ignore-file-name-case', '--no-ignore-file-name-case', '--ignore-case', '--ignore-tab-expansion', '--ignore-trailing-space', '--ignore-space-change', '--ignore-all-space', '--ignore-blank-lines', '--text', '--strip-trailing-cr', '--minimal', '--speed-large-files'];

export function diffEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: DIFF_VALUE, optional: ['--color', '--unified', '--context'], long: DIFF_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption(name, parsed.unknown[0]!));
  const recursive = hasOption(parsed, '-r', '--recursive');
  return known([
    // sdiff -o writes the merged result.
    ...optionValues(parsed, '-o', '--output').map((v) => use(v, 'write', `${name} -o`)),
    ...parsed.operands.map((v) => use(v, 'read', `${name} argument`, recursive)),
    ...optionValues(parsed, '--from-file', '--to-file', '-X', '--exclude-from').map((v) => use(v, 'read', `${name} --from-file`, recursive)),
  ]);
}
