import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { HookEntry } from '../config/settings.js';
import type { Problem } from '../errors.js';
import { git } from '../git/git.js';
import { findExecutable } from '../proc/find-executable.js';

// A hook runs in the worktree (its cwd and $CLAUDE_PROJECT_DIR), which holds the base
// commit's files, or the host's working tree with --from-worktree. A hook whose script is
// not there (uncommitted beside an uncommitted corral.yaml), is not executable, or names
// an interpreter this machine lacks cannot start: at run time that denies every call it
// guards, so it is found here, before any ticket runs, with the config line that names it.

/** Programs that run the script named by their first operand. */
const INTERPRETERS = new Set(['bash', 'sh', 'dash', 'zsh', 'ksh', 'node', 'python', 'python3', 'perl', 'ruby', 'deno', 'bun']);

/** Where the worktree's files come from: a commit of the host repository, or its working tree. */
export type HookSource = { kind: 'commit'; commit: string } | { kind: 'checkout' };

/**
 * Each hook command's programs and scripts that lie in the repository (named by a path,
 * or as the first operand of an interpreter), checked as the worktree will hold them.
 * Bare command names are left to PATH at run time; a missing one still fails closed there.
 */
export async function hookProblems(entries: HookEntry[], repo: string, source: HookSource, env: NodeJS.ProcessEnv, cwd: string): Promise<Problem[]> {
  if (entries.length === 0) return [];
  const [{ analyseScript }, { loadBashParser }] = await Promise.all([import('../guard/shell/analyse.js'), import('../guard/shell/parser.js')]);
  const parser = await loadBashParser();
  const hookEnv: Record<string, string> = { CLAUDE_PROJECT_DIR: repo, CORRAL_PROJECT_DIR: repo, ...(env.HOME ? { HOME: env.HOME } : {}) };
  const problems: Problem[] = [];
  for (const entry of entries) {
    const where = locate(entry.from, cwd);
    const problem = (message: string, hint: string): Problem => ({ ...where, field: `hooks.${entry.event}`, message: `hook \`${entry.command}\`: ${message}`, hint });
    for (const simple of analyseScript(parser, entry.command, { cwd: repo, env: hookEnv }).commands) {
      const [program, ...operands] = simple.args;
      if (program === undefined || program.unknown !== undefined || program.text === '') continue;
      const base = simple.cwd ?? repo;
      const targets: { file: string; executed: boolean }[] = [];
      if (program.text.includes('/')) targets.push({ file: path.resolve(base, program.text), executed: true });
      else if (INTERPRETERS.has(program.text)) {
        // Only `bash hooks/check.sh` form: with an option first (`-c '…'`, `python3 -m tool`) the
        // operand may be no file at all.
        const script = operands[0];
        if (script !== undefined && script.unknown === undefined && script.text !== '' && !script.text.startsWith('-')) targets.push({ file: path.resolve(base, script.text), executed: false });
      }
      for (const target of targets) {
        const message = await checkTarget(target.file, target.executed, repo, source, env.PATH ?? '');
        if (message !== null) problems.push(problem(message, 'hooks run in the worktree, which holds the base commit: commit the script as an executable file with a working #! line, or start from your working tree with --from-worktree'));
      }
    }
  }
  return problems;
}

/** `project corral.yaml:12` → the file and line of a problem. */
function locate(from: string, cwd: string): Pick<Problem, 'file' | 'line' | 'column'> {
  const match = /^\S+ (.*):(\d+)$/.exec(from);
  if (match === null) return { file: from, line: 1, column: 1 };
  return { file: path.relative(cwd, path.resolve(cwd, match[1]!)) || match[1]!, line: Number(match[2]), column: 1 };
}

/** Why a hook's program or script cannot start as the worktree will hold it; null when it can. */
async function checkTarget(file: string, executed: boolean, repo: string, source: HookSource, searchPath: string): Promise<string | null> {
  const inside = path.relative(repo, file);
  const inRepo = inside !== '' && !inside.startsWith('..') && !path.isAbsolute(inside);
  if (!inRepo || source.kind === 'checkout') return checkFile(file, executed, searchPath);
  const shortCommit = source.commit.slice(0, 12);
  const name = inside.split(path.sep).join('/');
  const listed = await git(repo, ['ls-tree', '-z', '--full-tree', source.commit, '--', name], { allowFailure: true, env: { GIT_LITERAL_PATHSPECS: '1' } });
  const entry = /^(\d+) (\w+) ([0-9a-f]+)\t/.exec(listed.stdout);
  if (entry === null) {
    // An ignored path (`./node_modules/.bin/x`) is made by setup, if at all: not this check's to judge.
    const ignored = await git(repo, ['check-ignore', '--quiet', '--no-index', '--', name], { allowFailure: true });
    if (ignored.exitCode === 0) return null;
    const onDisk = existsSync(file) ? ' (it is in your working tree, uncommitted)' : '';
    return `${name} is not in the base commit ${shortCommit}, so the worktree the hook runs in lacks it${onDisk}`;
  }
  const [, mode, type, oid] = entry;
  if (type !== 'blob') return `${name} is not a file in the base commit ${shortCommit}`;
  // A symbolic link is followed at run time; its target is the machine's business.
  if (mode === '120000') return null;
  if (executed && mode !== '100755') return `${name} is not executable in the base commit ${shortCommit} (git update-index --chmod=+x ${name})`;
  if (!executed) return null;
  const head = await git(repo, ['cat-file', 'blob', oid!], { allowFailure: true });
  return interpreterProblem(name, head.stdout.split('\n', 1)[0] ?? '', searchPath);
}

/** The same checks on a file as it is on disk. */
function checkFile(file: string, executed: boolean, searchPath: string): string | null {
  if (!existsSync(file)) return `${file} does not exist`;
  if (!executed) return null;
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return `${file} is not executable (chmod +x)`;
  }
  let firstLine = '';
  try {
    firstLine = readFileSync(file).subarray(0, 256).toString('utf8').split('\n', 1)[0] ?? '';
  } catch {
    return `${file} cannot be read`;
  }
  return interpreterProblem(file, firstLine, searchPath);
}

/** A `#!` line naming an interpreter this machine lacks: the kernel refuses to start the script. */
function interpreterProblem(name: string, firstLine: string, searchPath: string): string | null {
  if (!firstLine.startsWith('#!')) return null;
  const [interpreter, argument] = firstLine.slice(2).trim().split(/\s+/);
  if (interpreter === undefined || interpreter === '') return null;
  if (!isExecutableFile(interpreter)) return `${name} names the interpreter ${interpreter}, which is not on this machine (bad interpreter)`;
  if (path.basename(interpreter) === 'env' && argument !== undefined && !argument.startsWith('-') && findExecutable(argument, searchPath) === undefined) {
    return `${name} runs \`${argument}\` through env, which is not on PATH`;
  }
  return null;
}


function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
