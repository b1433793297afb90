import { statSync } from 'node:fs';
import path from 'node:path';
import { Argument, Command, CommanderError, Option } from 'commander';
import { CORRAL_VERSION } from '../package.js';
import { EXIT, formatProblem, InternalError, UsageError } from '../errors.js';
import { REPORTER_NAMES } from '../report/reporter.js';
import { suggestName } from '../text/suggest-name.js';
import { COMPLETION_SHELLS, completionScript, type CompletionShell } from './completion.js';
import { endOutputQuietlyOnClosedPipe, type CliIo } from './io.js';
import type { ReportingOptions } from './reporting.js';
import type { FindRepoAndCommit } from '../ticket/references.js';


/**
 * The CLI: commander wiring only. Commands import their module when they run, and this
 * is the one place that turns typed errors into exit codes.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  endOutputQuietlyOnClosedPipe(io.stdout);
  endOutputQuietlyOnClosedPipe(io.stderr);
  let exitCode: number = EXIT.passed;
  const program = corralProgram(io, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync(argv);
    return exitCode;
  } catch (error) {
    return reportError(error, io);
  }
}

/**
 * Every command and option of corral, for `main` to run and for `completion` to read.
 * An action hands its exit code to `setExitCode`.
 */
export function corralProgram(io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command()
    .name('corral')
    .description('Run a coding agent on a ticket inside a fence.')
    .version(CORRAL_VERSION)
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });

  program
    .command('run')
    .description('run tickets (files or folders): worktree, agent, checks, fence, summary')
    .argument('<tickets...>', 'ticket files (.yaml, .yml, .md), folders of them, or quoted globs')
    .option('--json', 'print JSON lines on stdout, nothing else: one object per ticket, then the totals')
    .addOption(reporterOption())
    .option('-j, --jobs <n>', 'how many tickets run at once, each in its own worktree (default: the CPU count)')
    .option('--shard <i/n>', 'run only the i-th of n slices (by a stable hash of ticket ids), for a CI matrix')
    .option('--bail', 'start no new ticket after the first one that does not pass (running ones finish)')
    .option('--max-usd <usd>', 'cap the whole batch: a ticket starts only while what is left covers its own budget.usd')
    .option('--junit <file>', 'also write a JUnit XML report: each ticket a testcase, its checks as properties')
    .option('--keep', 'keep the worktree after the run and print where it is')
    .option('--from-worktree', "start from your working tree (uncommitted and untracked files) instead of HEAD; your index, refs and files are left as they are")
    .option('--model <id>', 'model id, or replay:<script.yaml>, overriding the ticket')
    .addOption(new Option('--agent <agent>', 'who works the tickets, overriding them: corral\'s own loop, or Claude Code or Codex under corral\'s guard').choices(['corral', 'claude-code', 'codex']))
    .option('--runs-dir <dir>', 'where run directories go (default: <repo>/.corral/runs)')
    .option('--unattended', 'nobody is there to approve: refuse every ask (also when CI=true or stdin is not a terminal)')
    .action(async (tickets: string[], options: RunCommandOptions) => {
      const findRepo = await askTicketReposAhead(tickets);
      const { runCommand } = await import('./commands/run.js');
      setExitCode(await runCommand(tickets, options, io, findRepo));
    });

  program
    .command('check')
    .description('validate ticket files without running anything')
    .argument('<tickets...>', 'ticket files or folders')
    .action(async (tickets: string[]) => {
      const { checkCommand } = await import('./commands/check.js');
      setExitCode(await checkCommand(tickets, io));
    });

  program
    .command('explain')
    .description('show the guard\'s decision for one call, with parsed commands, resolved paths and the deciding rule (runs nothing)')
    .argument('<input...>', 'a Bash command, or the tool input as JSON, or the main field of --tool')
    .option('--tool <name>', 'the tool called', 'Bash')
    .option('--ticket <file>', 'judge with this ticket\'s fence, checks and rules, in its repository')
    .option('--cwd <dir>', 'where the command starts, relative to the repository root')
    .addOption(sandboxOption())
    .option('--json', 'print the verdict as JSON')
    .action(async (words: string[], options: ExplainOptions) => {
      const { explainCommand } = await import('./commands/explain.js');
      setExitCode(await explainCommand(words, options, io));
    });

  program
    .command('config')
    .description('print the effective config (user, project, ticket) with where each value and rule came from')
    .option('--ticket <file>', 'what this ticket gets: its own fields over the config of its repository')
    .option('--json', 'print it as JSON')
    .action(async (options: ConfigOptions) => {
      const { configCommand } = await import('./commands/config.js');
      setExitCode(await configCommand(options, io));
    });

  program
    .command('trace')
    .description('the run at a glance from its trace: steps, tools, denied and asked calls, slowest calls, tokens, cost (also a trace cut short by a crash)')
    .argument('<run>', 'a run directory or its trace.jsonl')
    .option('--json', 'print the same data as one JSON object')
    .action(async (run: string, options: TraceOptions) => {
      const { traceCommand } = await import('./commands/trace.js');
      setExitCode(await traceCommand(run, options, io));
    });

  program
    .command('clean')
    .description('save the patch of each worktree killed runs left in this repository, then remove them and dead runs\' temp dirs (live runs are kept)')
    .option('--force', 'also take worktrees and locks of another host\'s corral (CI containers, a shared checkout), after listing them')
    .option('--caches', "also remove this repository's setup caches (package downloads, node_modules by lockfile)")
    .action(async (options: { force?: boolean; caches?: boolean }) => {
      const { cleanCommand } = await import('./commands/clean.js');
      setExitCode(await cleanCommand(io, options));
    });

  program
    .command('init')
    .description('write a commented corral.yaml and an example ticket into this repository (never overwrites)')
    .action(async () => {
      const { initCommand } = await import('./commands/init.js');
      setExitCode(await initCommand(io));
    });

  program
    .command('replay')
    .description('judge every tool call of recorded runs with today\'s guard and config (a dry run) and list the calls whose decision would differ; exit 1 if any effect would')
    .argument('<traces...>', 'trace.jsonl files, run directories, or folders of them (e.g. .corral/runs)')
    .option('--json', 'print the differences and totals as one JSON object')
    .action(async (traces: string[], options: import('./commands/replay.js').ReplayOptions) => {
      const { replayCommand } = await import('./commands/replay.js');
      setExitCode(await replayCommand(traces, options, io));
    });

  const report = program.command('report').description('work with batch reports');
  report
    .command('merge')
    .description('join the JSON reports of shards (`corral run --shard i/n --json`) into one summary, one JUnit file and one exit code')
    .argument('<reports...>', 'report files written by `corral run --json`')
    .option('--json', 'print the merged report as JSON lines: one object per ticket, then the totals')
    .addOption(reporterOption())
    .option('--junit <file>', 'also write the merged JUnit XML report')
    .action(async (files: string[], options: import('./commands/report.js').ReportMergeOptions) => {
      const { reportMergeCommand } = await import('./commands/report.js');
      setExitCode(await reportMergeCommand(files, options, io));
    });

  const policy = program.command('policy').description('test guard policies');
  policy
    .command('test')
    .description('run a file of policy cases through the real guard as a dry run (default: policy_tests.yaml)')
    .argument('[file]', 'policy test file')
    .addOption(sandboxOption())
    .action(async (file: string | undefined, options: { sandbox?: 'bwrap' | 'none' }) => {
      const { policyTestCommand } = await import('./commands/policy-test.js');
      setExitCode(await policyTestCommand(file, io, options.sandbox));
    });

  const guard = program.command('guard').description("corral's guard in Claude Code's and Codex's own sessions: install it as their PreToolUse hook, or answer as that hook");
  for (const [name, description] of [
    ['install', "add corral's guard as a PreToolUse hook to the agent's own settings (default: Claude Code, this repository's .claude/settings.json)"],
    ['uninstall', "remove corral's guard hooks from the agent's own settings; everything else stays as it is"],
  ] as const) {
    guard
      .command(name)
      .description(description)
      .option('--claude-code', "Claude Code's settings (.claude/settings.json, .claude/settings.local.json, ~/.claude/settings.json)")
      .option('--codex', "Codex's hooks file (.codex/hooks.json, ~/.codex/hooks.json)")
      .addOption(new Option('--scope <scope>', 'whose settings: the repository\'s shared ones, yours in this repository, or yours everywhere').choices(['project', 'local', 'user']).default('project'))
      .option('--command <command>', 'the hook command to write (default: corral guard hook --agent <agent>, corral by its path when it is not on PATH)')
      .action(async (options: import('./commands/guard.js').GuardInstallOptions) => {
        const { guardInstallCommand, guardUninstallCommand } = await import('./commands/guard.js');
        setExitCode(await (name === 'install' ? guardInstallCommand : guardUninstallCommand)(options, io));
      });
  }
  guard
    .command('hook')
    .description('the PreToolUse hook command: reads the call on stdin and prints corral\'s decision (inside a run, the running corral decides)')
    .addOption(new Option('--agent <agent>', 'whose hook protocol to speak').choices(['claude-code', 'codex']).makeOptionMandatory())
    .action(async (options: { agent: 'claude-code' | 'codex' }) => {
      const { guardHookCommand } = await import('./commands/guard-hook.js');
      setExitCode(await guardHookCommand(options, io));
    });

  program
    .command('completion')
    .description('print a completion script for bash, zsh or fish, made from these commands and options')
    .addArgument(shellArgument())
    .action((shell: string) => {
      if (!isCompletionShell(shell)) {
        const suggestion = suggestName(shell, COMPLETION_SHELLS);
        throw new UsageError(`completion: no such shell ${JSON.stringify(shell)}${suggestion ? `; did you mean ${suggestion}?` : ''} (shells: ${COMPLETION_SHELLS.join(', ')})`);
      }
      io.stdout.write(completionScript(program, shell));
      setExitCode(EXIT.passed);
    });

  return program;
}

/** The shell is checked by the action, for a did-you-mean; the choices are there for completion and help. */
function shellArgument(): Argument {
  const argument = new Argument('<shell>', 'the shell the script is for');
  argument.argChoices = [...COMPLETION_SHELLS];
  return argument;
}

function isCompletionShell(name: string): name is CompletionShell {
  return (COMPLETION_SHELLS as readonly string[]).includes(name);
}

export interface ExplainOptions {
  tool: string;
  ticket?: string;
  cwd?: string;
  sandbox?: 'bwrap' | 'none';
  json?: boolean;
}

/** Dry runs judge for the sandbox a run would get here, unless told which. */
function sandboxOption(): Option {
  return new Option('--sandbox <kind>', 'judge as if commands ran in this sandbox (default: what a run gets on this machine)').choices(['bwrap', 'none']);
}

/**
 * `--reporter <name>`, repeatable as vitest's. The names are checked when the command
 * runs, by the registry that knows them; reporter.ts holds only the list of names, so
 * this module still loads none of the reporters.
 */
function reporterOption(): Option {
  const option = new Option('--reporter <name>', 'how to report the batch; again for more (default: chosen for where corral runs)').argParser(
    (name: string, previous: string[] | undefined) => [...(previous ?? []), name],
  );
  // Set as data, not with .choices(), which would replace the parser above and check
  // the names itself, without the registry's did-you-mean. Completion reads it.
  option.argChoices = [...REPORTER_NAMES];
  return option;
}

export interface ConfigOptions {
  ticket?: string;
  json?: boolean;
}

export interface TraceOptions {
  json?: boolean;
}

export interface RunCommandOptions extends ReportingOptions {
  jobs?: string;
  shard?: string;
  bail?: boolean;
  maxUsd?: string;
  unattended?: boolean;
  keep?: boolean;
  fromWorktree?: boolean;
  model?: string;
  agent?: 'corral' | 'claude-code' | 'codex';
  runsDir?: string;
}

function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    // --help and --version end through here too, with code 0.
    return error.exitCode === 0 ? EXIT.passed : EXIT.usage;
  }
  if (error instanceof UsageError) {
    io.stderr.write(`corral: ${error.message}\n`);
    for (const problem of error.problems) io.stderr.write(`  ${formatProblem(problem)}\n`);
    return error.exitCode;
  }
  const internal = error instanceof InternalError ? error : new InternalError(String(error instanceof Error ? error.stack : error));
  io.stderr.write(`corral: internal error: ${internal.message}\n`);
  return internal.exitCode;
}

/**
 * The first thing a run asks git, the repository and HEAD of each ticket's folder, asked
 * before the run's code loads (about 50 ms here), so that git answers meanwhile; the run's
 * ticket loader takes the answers from the lookups returned. A ticket file's folder, or a
 * folder of tickets itself; of the first eight inputs, at most four folders. A guess that
 * no ticket asks for (a ticket with `repo` or `base`, a glob) costs one git process.
 */
async function askTicketReposAhead(inputs: string[]): Promise<FindRepoAndCommit> {
  const { sharedRepoLookups } = await import('../git/git.js');
  const findRepo = sharedRepoLookups();
  const folders = new Set<string>();
  // The first few inputs only: a long list of files is most often one folder's.
  for (const input of inputs.slice(0, 8)) {
    const absolute = path.resolve(input);
    // A path that cannot be looked at (a file named as a folder, a loop, no permission)
    // is the ticket loader's to report, with its documented exit.
    let stats: ReturnType<typeof statSync>;
    try {
      stats = statSync(absolute, { throwIfNoEntry: false });
    } catch {
      continue;
    }
    if (stats?.isFile()) folders.add(path.dirname(absolute));
    else if (stats?.isDirectory()) folders.add(absolute);
    if (folders.size >= 4) break;
  }
  for (const folder of folders) void findRepo(folder, 'HEAD');
  return findRepo;
}
