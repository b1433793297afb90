import { stat } from 'node:fs/promises';
import path from 'node:path';
import { findRepoAndCommit, findRepoRoot } from '../git/git.js';
import type { FieldProblem } from './positions.js';
import { isReplayModel, replayModelId, replayScriptPath } from './model-id.js';

// The fields that name things outside the ticket file: the repository, a commit in
// it, and a replay script. They are checked against the disk and git here so a bad
// ticket fails before any worktree exists. Each check looks only at its own raw
// field, so these problems are reported alongside the schema's.


/** How a ticket's repository and base are found: git, or the answers a command shares among its tickets. */
export type FindRepoAndCommit = typeof findRepoAndCommit;

export interface RepoResolution {
  /** Top directory of the repository, when it was found. */
  root?: string;
  /** The commit `base` (default `HEAD`) names there, when it names one. */
  baseCommit?: string;
  problems: FieldProblem[];
}

/**
 * Finds the repository the ticket works on (`repo` relative to the ticket, or the one
 * containing it) and the commit its `base` names there, one git call for both.
 */
export async function resolveRepo(repo: unknown, ticketFile: string, base?: unknown, findRepo: FindRepoAndCommit = findRepoAndCommit): Promise<RepoResolution> {
  if (repo !== undefined && typeof repo !== 'string') return { problems: [] };
  const ticketDir = path.dirname(ticketFile);
  const find = async (dir: string): Promise<{ root?: string; baseCommit?: string; refused?: string }> => {
    if (base !== undefined && (typeof base !== 'string' || base === '')) {
      const root = await findRepoRoot(dir);
      return root ? { root } : {};
    }
    const found = await findRepo(dir, base ?? 'HEAD');
    return { ...(found.root ? { root: found.root } : {}), ...(found.commit ? { baseCommit: found.commit } : {}), ...(found.refused ? { refused: found.refused } : {}) };
  };
  // git refuses a repository another user owns unless the user's config trusts it.
  const refusal = (refused: string) =>
    problem(['repo'], `git refuses the repository at ${refused}: it is owned by another user, and no safe.directory entry of your git config trusts it`, `if you trust it, run \`git config --global --add safe.directory ${refused}\``);
  if (repo === undefined || repo === '') {
    const found = await find(ticketDir);
    if (found.root) return { root: found.root, ...(found.baseCommit ? { baseCommit: found.baseCommit } : {}), problems: [] };
    if (found.refused) return refusal(found.refused);
    return problem(['repo'], 'the ticket is not inside a git repository', 'set `repo:` to the repository to work on');
  }
  const dir = path.resolve(ticketDir, repo);
  if (!(await isDirectory(dir))) {
    return problem(['repo'], `\`${repo}\` is not a directory (resolved to ${dir})`, '`repo` is relative to the ticket file');
  }
  const found = await find(dir);
  if (found.root) return { root: found.root, ...(found.baseCommit ? { baseCommit: found.baseCommit } : {}), problems: [] };
  if (found.refused) return refusal(found.refused);
  return problem(['repo'], `\`${repo}\` is not in a git repository (resolved to ${dir})`, 'point `repo` at a git repository, or run `git init` there');
}

/** Checks that `base` (default `HEAD`) names a commit in the repository `resolveRepo` found. */
export function checkBase(base: unknown, repo: RepoResolution & { root: string }): FieldProblem[] {
  if (base !== undefined && (typeof base !== 'string' || base === '')) return [];
  const rev = base ?? 'HEAD';
  if (repo.baseCommit) return [];
  const hint =
    base === undefined
      ? 'the repository has no commits yet: commit something, or set `base`'
      : 'use a branch, tag or commit that exists, e.g. `base: main`';
  return problem(['base'], `\`${rev}\` does not resolve to a commit in ${repo.root}`, hint).problems;
}

export interface ModelResolution {
  /** The model as the run uses it: an id, or `replay:<absolute path>`. */
  model?: string;
  problems: FieldProblem[];
}

/** Resolves `replay:<file>` against the directory of the file that names it (a ticket or a config) and checks the file exists. */
export async function resolveModel(model: unknown, ticketFile: string, namedIn = 'ticket file'): Promise<ModelResolution> {
  if (typeof model !== 'string') return { problems: [] };
  if (!isReplayModel(model)) return { model, problems: [] };
  const script = replayScriptPath(model);
  if (script === '') return problem(['model'], 'no replay file given', `write \`replay:<file>\`, relative to the ${namedIn}`);
  const absolute = path.resolve(path.dirname(ticketFile), script);
  if (!(await isFile(absolute))) {
    return problem(['model'], `replay file \`${script}\` does not exist (resolved to ${absolute})`, `the path is relative to the ${namedIn}`);
  }
  return { model: replayModelId(absolute), problems: [] };
}

function problem(fieldPath: string[], message: string, hint: string): { problems: FieldProblem[] } {
  return { problems: [{ path: fieldPath, target: 'value', message, hint }] };
}

async function isDirectory(p: string): Promise<boolean> {
  return stat(p).then((s) => s.isDirectory(), () => false);
}

async function isFile(p: string): Promise<boolean> {
  return stat(p).then((s) => s.isFile(), () => false);
}
