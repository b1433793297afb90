import type { Command, Option } from 'commander';

// Shell completion, generated from the commander program itself: the commands, options and
// arguments a script completes are the ones `--help` shows, so adding an option to main.ts
// adds it to every shell's completion with nothing else to keep in step.

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;

export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** What a word in some position completes to. */
export type CompletionValue = { kind: 'none' } | { kind: 'files' } | { kind: 'dirs' } | { kind: 'words'; words: readonly string[] };

export interface CompletionOption {
  /** `--long` and `-s`, as typed. */
  names: string[];
  description: string;
  /** What the option's value completes to; undefined for a flag, which takes none. */
  value: CompletionValue | undefined;
}

export interface CompletionCommand {
  /** Subcommand names from the program down, empty for the program itself. */
  path: string[];
  description: string;
  commands: CompletionCommand[];
  options: CompletionOption[];
  /** What each positional argument completes to, in order. */
  args: CompletionValue[];
  /** The last argument takes any number of words. */
  variadic: boolean;
}

// Values are named in main.ts by what they are (`<file>`, `<tickets...>`); these names say
// a path is wanted. Anything else (`<n>`, `<usd>`, `<id>`) is free text with nothing to offer.
const PATH_VALUE_NAMES = new Set(['file', 'files', 'tickets', 'reports', 'traces', 'run']);
const DIRECTORY_VALUE_NAMES = new Set(['dir']);

/** The program as completion sees it: what its help shows, command by command. */
export function completionTree(program: Command): CompletionCommand {
  return describeCommand(program, []);
}

function describeCommand(command: Command, path: string[]): CompletionCommand {
  const help = command.createHelp();
  const subcommands = help.visibleCommands(command);
  const siblingNames = subcommands.map((sub) => sub.name()).filter((name) => name !== 'help');
  return {
    path,
    description: command.description(),
    commands: subcommands.map((sub) => {
      const described = describeCommand(sub, [...path, sub.name()]);
      // commander's own `help [command]` takes the name of a command beside it.
      if (sub.name() === 'help' && sub.registeredArguments[0]?.name() === 'command') described.args = [{ kind: 'words', words: siblingNames }];
      return described;
    }),
    options: help.visibleOptions(command).map(describeOption),
    args: command.registeredArguments.map((arg) => valueFor(arg.name(), arg.argChoices)),
    variadic: command.registeredArguments.at(-1)?.variadic ?? false,
  };
}

function describeOption(option: Option): CompletionOption {
  const names = [option.long, option.short].filter((name): name is string => name !== undefined);
  const takesValue = option.required || option.optional;
  const valueName = /[<[]([^>\]]+)[>\]]/.exec(option.flags)?.[1] ?? '';
  return { names, description: option.description, value: takesValue ? valueFor(valueName, option.argChoices) : undefined };
}

function valueFor(name: string, choices: readonly string[] | undefined): CompletionValue {
  if (choices && choices.length > 0) return { kind: 'words', words: choices };
  const bare = name.replace(/\.\.\.$/, '');
  if (PATH_VALUE_NAMES.has(bare)) return { kind: 'files' };
  if (DIRECTORY_VALUE_NAMES.has(bare)) return { kind: 'dirs' };
  return { kind: 'none' };
}

/** Every command of the tree, the program first, parents before their subcommands. */
export function allCommands(tree: CompletionCommand): CompletionCommand[] {
  return [tree, ...tree.commands.flatMap(allCommands)];
}

/** The completion script for `shell`, for a program called `program.name()`. */
export function completionScript(program: Command, shell: CompletionShell): string {
  const tree = completionTree(program);
  const name = program.name();
  for (const command of allCommands(tree)) {
    for (const word of [...command.path, ...command.options.flatMap((o) => o.names), ...command.options.flatMap((o) => wordsOf(o.value)), ...command.args.flatMap(wordsOf)]) {
      // Every script lists words unquoted inside a quoted list; a word that would need
      // quoting of its own is a name no user should have to type either.
      if (!/^[A-Za-z0-9_.:/@+-]+$/.test(word)) throw new Error(`cannot complete ${JSON.stringify(word)}: only plain words are supported`);
    }
  }
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new Error(`cannot complete a program called ${JSON.stringify(name)}`);
  const fn = name.replace(/-/g, '_');
  switch (shell) {
    case 'bash':
      return bashScript(tree, name, fn);
    case 'zsh':
      return zshScript(tree, name, fn);
    case 'fish':
      return fishScript(tree, name, fn);
  }
}

function wordsOf(value: CompletionValue | undefined): readonly string[] {
  return value?.kind === 'words' ? value.words : [];
}

/** `$1|$2` keys the arguments of a command: a command path never holds `|`. */
function argumentCases(command: CompletionCommand, render: (value: CompletionValue) => string, pattern: (key: string, glob: boolean) => string): string[] {
  const key = command.path.join(' ');
  const cases: string[] = [];
  command.args.forEach((value, index) => {
    const last = index === command.args.length - 1;
    if (last && command.variadic) cases.push(`${pattern(`${key}|`, true)} ${render(value)}`);
    else cases.push(`${pattern(`${key}|${index}`, false)} ${render(value)}`);
  });
  return cases;
}

function valueOptions(command: CompletionCommand): CompletionOption[] {
  return command.options.filter((option) => option.value !== undefined);
}

function singleQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

function bashScript(tree: CompletionCommand, name: string, fn: string): string {
  const commands = allCommands(tree);
  const key = (command: CompletionCommand): string => singleQuoted(command.path.join(' '));
  const render = (value: CompletionValue): string => {
    switch (value.kind) {
      case 'files':
        return `_${fn}_paths -f "$3" ;;`;
      case 'dirs':
        return `_${fn}_paths -d "$3" ;;`;
      case 'words':
        return `_${fn}_words ${singleQuoted(value.words.join(' '))} "$3" ;;`;
      case 'none':
        return ';;';
    }
  };
  const lines = [
    `# ${name} completion for bash, generated by \`${name} completion bash\`.`,
    `# Load it with: source <(${name} completion bash)`,
    '',
    `_${fn}_subcommands() {`,
    '  case $1 in',
    ...commands.filter((c) => c.commands.length > 0).map((c) => `    ${key(c)}) echo ${singleQuoted(c.commands.map((s) => s.path.at(-1)).join(' '))} ;;`),
    '  esac',
    '}',
    '',
    `_${fn}_options() {`,
    '  case $1 in',
    ...commands.map((c) => `    ${key(c)}) echo ${singleQuoted(c.options.flatMap((o) => o.names).join(' '))} ;;`),
    '  esac',
    '}',
    '',
    `_${fn}_value_options() {`,
    '  case $1 in',
    ...commands.map((c) => `    ${key(c)}) echo ${singleQuoted(valueOptions(c).flatMap((o) => o.names).join(' '))} ;;`),
    '  esac',
    '}',
    '',
    `_${fn}_words() {`,
    '  local IFS=$\'\\n\'',
    '  COMPREPLY+=($(IFS=\' \' compgen -W "$1" -- "$2"))',
    '}',
    '',
    `_${fn}_paths() {`,
    '  local IFS=$\'\\n\'',
    '  COMPREPLY+=($(compgen "$1" -- "$2"))',
    '  # Quote what readline inserts, and add a slash to directories.',
    '  type compopt &>/dev/null && compopt -o filenames 2>/dev/null',
    '  return 0',
    '}',
    '',
    '# $1 the command path, $2 the option, $3 the word typed so far.',
    `_${fn}_option_value() {`,
    '  case "$1|$2" in',
    ...commands.flatMap((c) => valueOptions(c).flatMap((o) => o.names.map((n) => `    ${singleQuoted(`${c.path.join(' ')}|${n}`)}) ${render(o.value!)}`))),
    '  esac',
    '}',
    '',
    '# $1 the command path, $2 the index of the argument, $3 the word typed so far.',
    `_${fn}_argument() {`,
    '  case "$1|$2" in',
    ...commands.flatMap((c) => argumentCases(c, render, (k, glob) => `    ${singleQuoted(k)}${glob ? '*' : ''})`)),
    '  esac',
    '}',
    '',
    `_${fn}_completion() {`,
    '  COMPREPLY=()',
    '  local cur="${COMP_WORDS[COMP_CWORD]}" path="" args=0 value_of="" only_args="" word i',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    word="${COMP_WORDS[i]}"',
    '    # With = in COMP_WORDBREAKS, `--opt=value` arrives as three words.',
    '    if [[ -n $value_of ]]; then',
    '      [[ $word == "=" ]] || value_of=""',
    '      continue',
    '    fi',
    '    if [[ -z $only_args && $word == -- ]]; then only_args=1; continue; fi',
    '    if [[ -z $only_args && $word == -* ]]; then',
    `      [[ " $(_${fn}_value_options "$path") " == *" $word "* ]] && value_of="$word"`,
    '      continue',
    '    fi',
    `    if (( args == 0 )) && [[ " $(_${fn}_subcommands "$path") " == *" $word "* ]]; then`,
    '      path="${path:+$path }$word"',
    '    else',
    '      ((args++))',
    '    fi',
    '  done',
    '  if [[ -n $value_of ]]; then',
    '    [[ $cur == "=" ]] && cur=""',
    `    _${fn}_option_value "$path" "$value_of" "$cur"`,
    '    return 0',
    '  fi',
    '  if [[ -z $only_args && $cur == -* ]]; then',
    `    _${fn}_words "$(_${fn}_options "$path")" "$cur"`,
    '    return 0',
    '  fi',
    `  (( args == 0 )) && _${fn}_words "$(_${fn}_subcommands "$path")" "$cur"`,
    `  _${fn}_argument "$path" "$args" "$cur"`,
    '  return 0',
    '}',
    '',
    `complete -F _${fn}_completion ${name}`,
  ];
  return `${lines.join('\n')}\n`;
}

function zshScript(tree: CompletionCommand, name: string, fn: string): string {
  const commands = allCommands(tree);
  const key = (command: CompletionCommand): string => singleQuoted(command.path.join(' '));
  const render = (value: CompletionValue): string => {
    switch (value.kind) {
      case 'files':
        return '_files ;;';
      case 'dirs':
        return '_files -/ ;;';
      case 'words':
        return `compadd -- ${value.words.join(' ')} ;;`;
      case 'none':
        return ';;';
    }
  };
  // _describe takes `name:description`; a colon in the name is escaped.
  const described = (word: string, description: string): string => singleQuoted(`${word.replace(/:/g, '\\:')}:${description.replace(/\n/g, ' ')}`);
  const lines = [
    `#compdef ${name}`,
    `# ${name} completion for zsh, generated by \`${name} completion zsh\`.`,
    `# Load it with (after compinit): source <(${name} completion zsh)`,
    '',
    `_${fn}() {`,
    '  local cur="${words[CURRENT]}" path="" value_of="" only_args="" word i',
    '  local -i args=0',
    '  local -a subcommands value_options described',
    '  for ((i = 2; i < CURRENT; i++)); do',
    '    word="${words[i]}"',
    '    if [[ -n $value_of ]]; then value_of=""; continue; fi',
    '    if [[ -z $only_args && $word == -- ]]; then only_args=1; continue; fi',
    '    if [[ -z $only_args && $word == -* ]]; then',
    `      value_options=(\${(z)"$(_${fn}_value_options "$path")"})`,
    '      (( ${value_options[(Ie)$word]} )) && value_of="$word"',
    '      continue',
    '    fi',
    `    subcommands=(\${(z)"$(_${fn}_subcommands "$path")"})`,
    '    if (( args == 0 && ${subcommands[(Ie)$word]} )); then',
    '      path="${path:+$path }$word"',
    '    else',
    '      (( args++ ))',
    '    fi',
    '  done',
    '  if [[ -n $value_of ]]; then',
    '    case "$path|$value_of" in',
    ...commands.flatMap((c) => valueOptions(c).flatMap((o) => o.names.map((n) => `      ${singleQuoted(`${c.path.join(' ')}|${n}`)}) ${render(o.value!)}`))),
    '    esac',
    '    return 0',
    '  fi',
    '  if [[ -z $only_args && $cur == -* ]]; then',
    '    case $path in',
    ...commands.map((c) => `      ${key(c)}) described=(${c.options.flatMap((o) => o.names.map((n) => described(n, o.description))).join(' ')}) ;;`),
    '    esac',
    "    _describe -t options 'option' described",
    '    return 0',
    '  fi',
    '  if (( args == 0 )); then',
    '    case $path in',
    ...commands
      .filter((c) => c.commands.length > 0)
      .map((c) => `      ${key(c)}) described=(${c.commands.map((s) => described(s.path.at(-1)!, s.description)).join(' ')}) ;;`),
    '      *) described=() ;;',
    '    esac',
    "    (( ${#described} )) && _describe -t commands 'command' described",
    '  fi',
    '  case "$path|$args" in',
    ...commands.flatMap((c) => argumentCases(c, render, (k, glob) => `    ${singleQuoted(k)}${glob ? '*' : ''})`)),
    '  esac',
    '  return 0',
    '}',
    '',
    `_${fn}_subcommands() {`,
    '  case $1 in',
    ...commands.filter((c) => c.commands.length > 0).map((c) => `    ${key(c)}) print -r -- ${singleQuoted(c.commands.map((s) => s.path.at(-1)).join(' '))} ;;`),
    '  esac',
    '}',
    '',
    `_${fn}_value_options() {`,
    '  case $1 in',
    ...commands.map((c) => `    ${key(c)}) print -r -- ${singleQuoted(valueOptions(c).flatMap((o) => o.names).join(' '))} ;;`),
    '  esac',
    '}',
    '',
    '# Autoloaded from $fpath the file is the function body; sourced, it registers itself.',
    `if [[ \${zsh_eval_context[-1]} == loadautofunc ]]; then`,
    `  _${fn} "$@"`,
    'elif (( $+functions[compdef] )); then',
    `  compdef _${fn} ${name}`,
    'fi',
  ];
  return `${lines.join('\n')}\n`;
}

function fishQuoted(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function fishScript(tree: CompletionCommand, name: string, fn: string): string {
  const commands = allCommands(tree);
  const key = (command: CompletionCommand): string => fishQuoted(command.path.join(' '));
  const render = (value: CompletionValue): string => {
    switch (value.kind) {
      case 'files':
        return '__fish_complete_path "$cur"';
      case 'dirs':
        return '__fish_complete_directories "$cur"';
      case 'words':
        return `printf '%s\\n' ${value.words.join(' ')}`;
      case 'none':
        return 'true';
    }
  };
  const tabbed = (word: string, description: string): string => fishQuoted(`${word}\t${description.replace(/\n/g, ' ')}`);
  const lines = [
    `# ${name} completion for fish, generated by \`${name} completion fish\`.`,
    `# Load it with: ${name} completion fish | source`,
    '',
    `function __${fn}_subcommands`,
    '    switch $argv[1]',
    ...commands.filter((c) => c.commands.length > 0).flatMap((c) => [`        case ${key(c)}`, `            printf '%s\\n' ${c.commands.map((s) => s.path.at(-1)).join(' ')}`]),
    '    end',
    'end',
    '',
    `function __${fn}_value_options`,
    '    switch $argv[1]',
    ...commands.filter((c) => valueOptions(c).length > 0).flatMap((c) => [`        case ${key(c)}`, `            printf '%s\\n' ${valueOptions(c).flatMap((o) => o.names).join(' ')}`]),
    '    end',
    'end',
    '',
    `function __${fn}_complete`,
    '    set -l words (commandline -opc)',
    '    set -l cur (commandline -ct)',
    '    set -l path ""',
    '    set -l args 0',
    '    set -l value_of ""',
    '    set -l only_args ""',
    '    for word in $words[2..-1]',
    '        if test -n "$value_of"',
    '            set value_of ""',
    '            continue',
    '        end',
    '        if test -z "$only_args"; and test "$word" = --',
    '            set only_args 1',
    '            continue',
    '        end',
    '        if test -z "$only_args"; and string match -q -- "-*" $word',
    `            contains -- $word (__${fn}_value_options "$path"); and set value_of $word`,
    '            continue',
    '        end',
    `        if test $args -eq 0; and contains -- $word (__${fn}_subcommands "$path")`,
    '            set path (string trim -- "$path $word")',
    '        else',
    '            set args (math $args + 1)',
    '        end',
    '    end',
    '    if test -n "$value_of"',
    '        switch "$path|$value_of"',
    ...commands.flatMap((c) => valueOptions(c).flatMap((o) => o.names.flatMap((n) => [`            case ${fishQuoted(`${c.path.join(' ')}|${n}`)}`, `                ${render(o.value!)}`]))),
    '        end',
    '        return',
    '    end',
    '    if test -z "$only_args"; and string match -q -- "-*" "$cur"',
    '        switch $path',
    ...commands.flatMap((c) => [`            case ${key(c)}`, `                printf '%s\\n' ${c.options.flatMap((o) => o.names.map((n) => tabbed(n, o.description))).join(' ')}`]),
    '        end',
    '        return',
    '    end',
    '    if test $args -eq 0',
    '        switch $path',
    ...commands
      .filter((c) => c.commands.length > 0)
      .flatMap((c) => [`            case ${key(c)}`, `                printf '%s\\n' ${c.commands.map((s) => tabbed(s.path.at(-1)!, s.description)).join(' ')}`]),
    '        end',
    '    end',
    '    switch "$path|$args"',
    ...commands.flatMap((c) =>
      argumentCases(
        c,
        (value) => `\n                ${render(value)}`,
        // A quoted `*` is still a wildcard to `case`; unquoted, fish would glob it against files.
        (k, glob) => `            case ${fishQuoted(`${k}${glob ? '*' : ''}`)}`,
      ),
    ),
    '    end',
    'end',
    '',
    `complete -c ${name} -f -a '(__${fn}_complete)'`,
  ];
  return `${lines.join('\n')}\n`;
}
