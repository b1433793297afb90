import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { beforeAll, describe, expect, it } from 'vitest';
import { COMPLETION_SHELLS, completionScript, completionTree, type CompletionShell } from '../../src/cli/completion.js';
import { corralProgram } from '../../src/cli/main.js';
import { REPORTER_NAMES } from '../../src/report/reporter.js';
import { PROJECT_ROOT, runCli } from '../support/cli.js';
import { tempDir } from '../support/repo.js';

// The program main runs, read here by its own fields (commands, options) rather than by
// the help walk the generator uses: an option main.ts gains and a script does not offer
// fails below, in every shell installed.
const program = corralProgram({ stdout: new PassThrough(), stderr: new PassThrough(), stdin: new PassThrough(), env: {} }, () => undefined);

interface Known {
  path: string[];
  subcommands: string[];
  /** Every option name, long and short, with commander's own -h/--help. */
  options: string[];
  /** Options whose value is one of a list, with the list. */
  choices: { option: string; words: string[] }[];
}

function known(command: Command, at: string[] = []): Known[] {
  const own: Known = {
    path: at,
    subcommands: command.commands.map((sub) => sub.name()),
    options: [...command.options.flatMap((option) => [option.long, option.short].filter((name): name is string => name !== undefined)), '--help', '-h'],
    choices: command.options.filter((option) => option.argChoices).map((option) => ({ option: option.long!, words: option.argChoices! })),
  };
  return [own, ...command.commands.flatMap((sub) => known(sub, [...at, sub.name()]))];
}

const KNOWN = known(program);

function installed(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
}

// Each runner loads the generated script into the real shell and asks it to complete the
// last word of each query (an empty string: the cursor after a space), in `cwd`.
type Runner = (script: string, queries: string[][], cwd: string) => string[][];

const ZSH_COMPLETE = path.join(PROJECT_ROOT, 'test', 'support', 'zsh-complete.zsh');

const RUNNERS: Record<CompletionShell, Runner> = {
  bash: (script, queries, cwd) =>
    queries.map((words) =>
      lines(
        execFileSync(
          'bash',
          [
            '--norc',
            '--noprofile',
            '-c',
            'source "$1" && shift && complete -p corral >/dev/null && COMP_WORDS=("$@") && COMP_CWORD=$(($# - 1)) && COMP_LINE="$*" && COMP_POINT=${#COMP_LINE} && _corral_completion && printf "%s\\n" "${COMPREPLY[@]}"',
            '_',
            script,
            ...words,
          ],
          { cwd, encoding: 'utf8' },
        ),
      ),
    ),
  // zsh completes only inside its line editor: one interactive zsh on a pseudo-terminal
  // types every query and a Tab (test/support/zsh-complete.zsh).
  zsh: (script, queries, cwd) => {
    const output = execFileSync('zsh', ['-f', ZSH_COMPLETE, script, ...queries.map((words) => words.join(' '))], { cwd, encoding: 'utf8', timeout: 60_000 });
    const answers = output.split('<end>\n').slice(0, -1).map(lines);
    expect(answers).toHaveLength(queries.length);
    return answers;
  },
  fish: (script, queries, cwd) =>
    queries.map((words) =>
      lines(execFileSync('fish', ['--no-config', '-c', 'source $argv[1]; and complete -C $argv[2]', script, words.join(' ')], { cwd, encoding: 'utf8' })).map(
        (line) => line.split('\t')[0]!,
      ),
    ),
};

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line !== '');
}

function sorted(words: string[]): string[] {
  return [...new Set(words)].sort();
}

describe('completion tree', () => {
  it('holds every command and option commander knows, with the values of options that have a list', () => {
    const tree = completionTree(program);
    const byPath = new Map<string, ReturnType<typeof completionTree>>();
    const walk = (node: ReturnType<typeof completionTree>): void => {
      byPath.set(node.path.join(' '), node);
      node.commands.forEach(walk);
    };
    walk(tree);
    for (const command of KNOWN) {
      const node = byPath.get(command.path.join(' '));
      expect(node, `corral ${command.path.join(' ')}`).toBeDefined();
      expect(sorted(node!.options.flatMap((o) => o.names)), `options of corral ${command.path.join(' ')}`).toEqual(sorted(command.options));
      expect(sorted(node!.commands.map((c) => c.path.at(-1)!).filter((name) => name !== 'help'))).toEqual(sorted(command.subcommands));
    }
    const run = byPath.get('run')!;
    expect(run.options.find((o) => o.names.includes('--reporter'))?.value).toEqual({ kind: 'words', words: [...REPORTER_NAMES] });
    expect(run.options.find((o) => o.names.includes('--junit'))?.value).toEqual({ kind: 'files' });
    expect(run.options.find((o) => o.names.includes('--runs-dir'))?.value).toEqual({ kind: 'dirs' });
    expect(run.options.find((o) => o.names.includes('--jobs'))?.value).toEqual({ kind: 'none' });
    expect(run.options.find((o) => o.names.includes('--bail'))?.value).toBeUndefined();
    expect(run.args).toEqual([{ kind: 'files' }]);
    expect(run.variadic).toBe(true);
    expect(byPath.get('completion')!.args).toEqual([{ kind: 'words', words: [...COMPLETION_SHELLS] }]);
  });
});

for (const shell of COMPLETION_SHELLS) {
  describe.skipIf(!installed(shell))(`${shell} completion, run in ${shell}`, () => {
    const complete = RUNNERS[shell];
    let script: string;
    let repo: string;

    beforeAll(() => {
      const dir = tempDir(`corral-completion-${shell}-`);
      script = path.join(dir, `corral.${shell}`);
      writeFileSync(script, completionScript(program, shell));
      repo = path.join(dir, 'repo');
      mkdirSync(path.join(repo, 'tickets'), { recursive: true });
      writeFileSync(path.join(repo, 'tickets', 'fix-a.yaml'), '');
      writeFileSync(path.join(repo, 'tickets', 'fix-b.md'), '');
      writeFileSync(path.join(repo, 'notes.txt'), '');
    });

    it('completes command names, options and reporter names', () => {
      const [ru, re, j, merge, shells, po, t] = complete(
        script,
        [
          ['corral', 'ru'],
          ['corral', 'run', '--re'],
          ['corral', 'run', '--reporter', 'j'],
          ['corral', 'report', 'merge', '--reporter', ''],
          ['corral', 'completion', ''],
          ['corral', 'po'],
          ['corral', 'policy', 't'],
        ],
        repo,
      );
      expect(ru).toEqual(['run']);
      expect(re).toEqual(['--reporter']);
      expect(sorted(j!)).toEqual(['json', 'junit']);
      expect(sorted(merge!)).toEqual(sorted([...REPORTER_NAMES]));
      expect(sorted(shells!)).toEqual(sorted([...COMPLETION_SHELLS]));
      expect(po).toEqual(['policy']);
      expect(t).toEqual(['test']);
    });

    it('offers every option of every command, and every subcommand', () => {
      const checks: { query: string[]; expected: string[]; ignore?: string; what: string }[] = [];
      for (const command of KNOWN) {
        const where = `corral ${command.path.join(' ')}`;
        checks.push({ query: ['corral', ...command.path, '-'], expected: command.options, what: `options of ${where}` });
        // commander's own help command sits beside every command that has subcommands.
        if (command.subcommands.length > 0) checks.push({ query: ['corral', ...command.path, ''], expected: command.subcommands, ignore: 'help', what: `subcommands of ${where}` });
        for (const { option, words } of command.choices) checks.push({ query: ['corral', ...command.path, option, ''], expected: words, what: `${where} ${option}` });
      }
      const answers = complete(
        script,
        checks.map((check) => check.query),
        repo,
      );
      checks.forEach((check, index) => {
        expect(sorted(answers[index]!.filter((word) => word !== check.ignore)), check.what).toEqual(sorted(check.expected));
      });
    });

    it('completes ticket paths, and skips over option values but not flags', () => {
      const queries = [
        ['corral', 'run', 'tic'],
        ['corral', 'run', 'tickets/'],
        ['corral', 'check', 'tickets/fix-a.yaml', 'tickets/fix-b'],
        ['corral', 'run', '--bail', 'no'],
        ['corral', 'run', '--jobs', '4', 'no'],
        ['corral', 'run', '--runs-dir', ''],
        ['corral', 'run', '--jobs', ''],
      ];
      const answers = complete(script, queries, repo).map((words) => sorted(words.map((word) => word.replace(/\/$/, ''))));
      expect(answers).toEqual([['tickets'], ['tickets/fix-a.yaml', 'tickets/fix-b.md'], ['tickets/fix-b.md'], ['notes.txt'], ['notes.txt'], ['tickets'], []]);
    });
  });
}

describe('corral completion', () => {
  it('prints the script the generator makes from the program main runs', async () => {
    for (const shell of COMPLETION_SHELLS) {
      const run = await runCli(['completion', shell], { cwd: os.tmpdir() });
      expect(run.exitCode).toBe(0);
      // execa drops the last newline of what it captures.
      expect(`${run.stdout}\n`).toBe(completionScript(program, shell));
    }
  });

  it('refuses a shell it has no script for with exit 64 and a suggestion', async () => {
    const run = await runCli(['completion', 'bsh'], { cwd: os.tmpdir() });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toBe('corral: completion: no such shell "bsh"; did you mean bash? (shells: bash, zsh, fish)');
    expect(run.stdout).toBe('');
  });
});
