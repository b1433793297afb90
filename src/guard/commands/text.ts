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

export function awkEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: ['-F', '-v', '-f', '-W', '-l', '-i', '-E', '--field-separator', '--assign', '--file', '--load', '--include', '--exec'], long: ['--posix', '--traditional'] });
  // -f, -E, -i and -l (gawk) load program files or native libraries; -W exec (mawk) too.
  if (parsed.unknown.length > 0 || hasOption(parsed, '-f', '--file', '-W', '-l', '-i', '-E', '--load', '--include', '--exec')) return unknown(`\`${name}\` runs a program the guard cannot read`);
  const [program, ...files] = parsed.operands;
  if (program === undefined || program.unknown !== undefined) return unknown(`the ${name} program is not known`);
  // `>` and `|` redirect only print, printf and getline; a comparison like `$1 > 3` is fine.
  const redirects = /\b(print|printf|getline)\b/.test(program.text) && /[>|]/.test(program.text);
  if (redirects || /system|getline|fflush|close|ENVIRON|ARGV|ARGC|PROCINFO|@/.test(program.text)) {
    return unknown(`the ${name} program may run commands, write or pick files, or read the environment`, files.map((v) => use(v, 'read', `${name} file`)));
  }
  return known(files.filter((v) => !/^[A-Za-z_][A-Za-z0-9_]*=/.test(v.text)).map((v) => use(v, 'read', `${name} file`)));
}

/** jq's `--arg name value` family take two words; `--slurpfile`/`--rawfile name file` read the file. */
export function jqEffects(name: string, rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const paths: PathUse[] = [];
  const positional: WordValue[] = [];
  let fromFile = false;
  for (let i = 0; i < rest.length; i++) {
    const text = rest[i]!.text;
    if (rest[i]!.unknown === undefined && /^--(arg|argjson|slurpfile|rawfile)$/.test(text)) {
      if (text === '--slurpfile' || text === '--rawfile') if (rest[i + 2]) paths.push(use(rest[i + 2]!, 'read', `${name} ${text}`));
      i += 2;
      continue;
    }
    if (text === '-f' || text === '--from-file') {
      fromFile = true;
      if (rest[i + 1]) paths.push(use(rest[i + 1]!, 'read', `${name} -f`));
      i += 1;
      continue;
    }
    if (text === '--indent') {
      i += 1;
      continue;
    }
    // -L adds a module path (imports read files from it); --args turns later words into values.
    if (text === '-L' || text.startsWith('-L') || text === '--args' || text === '--jsonargs') return unknown(`\`${name} ${text}\` reads modules or arguments the guard does not follow`);
    if (rest[i]!.unknown !== undefined) return unknown(unknownOption(name, UNKNOWN_ARGUMENT));
    if (text.startsWith('--') && !/^--(slurp|raw-input|null-input|compact-output|tab|color-output|monochrome-output|ascii-output|unbuffered|sort-keys|raw-output|join-output|raw-output0|exit-status|seq|stream|stream-errors)$/.test(text)) {
      return unknown(unknownOption(name, text));
    }
    if (text.startsWith('-') && text !== '-') {
      if (name === 'yq' && /i/.test(text.slice(1))) return unknown('`yq -i` rewrites files');
      if (text.includes('f')) {
        // `-nf file`: f in a cluster takes the next word as the program file.
        fromFile = true;
        if (rest[i + 1]) paths.push(use(rest[i + 1]!, 'read', `${name} -f`));
        i += 1;
      }
      if (text.includes('L')) return unknown(`\`${name} -L\` reads modules from a directory`);
      continue;
    }
    positional.push(rest[i]!);
  }
  const files = fromFile ? positional : positional.slice(1);
  return known([...paths, ...files.map((v) => use(v, 'read', `${name} argument`))]);
}

const SORT_VALUE = ['-k', '-t', '-o', '-S', '-T', '--key', '--field-separator', '--output', '--buffer-size', '--temporary-directory', '--parallel', '--files0-from', '--batch-size', '--sort', '--random-source', '--compress-program'];
const SORT_LONG = ['--ignore-leading-blanks', '--dictionary-order', '--ignore-case', '--general-numeric-sort', '--ignore-nonprinting', '--month-sort', '--human-numeric-sort', '--numeric-sort', '--random-sort', '--reverse', '--version-sort', '--debug', '--merge', '--stable', '--unique', '--zero-terminated'];

export function sortEffects(rest: WordValue[], known: Known, unknown: Unknown): CommandEffects {
  const parsed = parseArgs(rest, { value: SORT_VALUE, optional: ['--check'], long: SORT_LONG });
  if (parsed.unknown.length > 0) return unknown(unknownOption('sort', parsed.unknown[0]!));
  if (hasOption(parsed, '--compress-program')) return unknown('`sort --compress-program` runs a program');
  return known([
    ...parsed.operands.map((v) => use(v, 'read', 'sort argument')),
    ...optionValues(parsed, '-o', '--output').map((v) => use(v, 'write', 'sort -o')),
    ...optionValues(parsed, '-T', '--temporary-directory').map((v) => use(v, 'write', 'sort -T', true)),
    ...optionValues(parsed, '--files0-from', '--random-source').map((v) => use(v, 'read', 'sort --files0-from')),
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
