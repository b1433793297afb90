import { z } from 'zod';
import { toolError } from './file-errors.js';
import { sortNewestFirst } from './newest-first.js';
import { capText } from '../text/output-cap.js';
import { searchRootLabel, statSearchRoot } from './search-root.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './types.js';

const MAX_RESULTS = 1000;

const GlobInput = z.strictObject({
  pattern: z.string().min(1).describe('Glob pattern, e.g. "**/*.ts" or "src/**/test_*.py".'),
  path: z.string().min(1).optional().describe('Directory to search in, relative to the repository root (default: the root).'),
});
export type GlobInput = z.infer<typeof GlobInput>;

export const globTool: ToolDefinition<GlobInput> = {
  name: 'Glob',
  description:
    'Find files by name with a glob pattern (e.g. "**/*.ts"). Searches the repository root, or `path` ' +
    '(relative to the root). Hidden files are included, .git is not. ' +
    `Returns paths relative to the repository root, most recently modified first, at most ${MAX_RESULTS}.`,
  kind: 'search',
  input: GlobInput,
  locations: (input, base) => [{ given: input.path ?? '.', path: resolveToolPath(input.path ?? '.', base), access: 'list', recursive: true, label: 'Glob path' }],
  execute: executeGlob,
};

/** An absolute pattern or a `..` segment (also inside braces) would list files outside the search path. */
export function patternLeavesRoot(pattern: string): boolean {
  if (pattern.startsWith('/') || pattern.startsWith('~')) return true;
  return pattern.split(/[/{},]/).some((segment) => segment === '..');
}

async function executeGlob(input: GlobInput, ctx: ToolContext): Promise<ToolOutput> {
  const started = performance.now();
  if (patternLeavesRoot(input.pattern)) {
    return toolError(`The pattern ${input.pattern} reaches outside the search path; use a relative pattern without ".." and set \`path\` instead.`);
  }
  const root = resolveToolPath(input.path ?? '.', ctx.worktree);
  const shownRoot = displayPath(root, ctx.worktree);
  const searchRoot = await statSearchRoot(root, shownRoot);
  if (searchRoot.kind === 'error') return searchRoot.output;
  if (searchRoot.kind === 'file') return toolError(`${shownRoot} is a file; path must be a directory to search in.`);

  // Loaded with the first search: a run that never searches never pays for it.
  const { glob } = await import('tinyglobby');
  const found = await glob(input.pattern, {
    cwd: root,
    absolute: true,
    dot: true,
    onlyFiles: true,
    expandDirectories: false,
    // Symlinked directories may loop or lead out of the repository; list them, do not walk them.
    followSymbolicLinks: false,
    ignore: ['**/.git', '**/.git/**'],
    signal: ctx.signal,
  });
  if (ctx.signal.aborted) return toolError('The search was interrupted.');
  const response = (filenames: string[], truncated: boolean) => ({ filenames, durationMs: Math.round(performance.now() - started), numFiles: filenames.length, truncated });
  if (found.length === 0) return { content: `No files match ${input.pattern} in ${searchRootLabel(shownRoot)}.`, isError: false, response: response([], false) };

  const sorted = await sortNewestFirst(found);
  const shown = sorted.slice(0, MAX_RESULTS).map((file) => displayPath(file, ctx.worktree));
  const note =
    sorted.length > MAX_RESULTS
      ? `\n\n[Showing the ${MAX_RESULTS} most recently modified of ${sorted.length} files; narrow the pattern or path to see the rest.]`
      : '';
  return { content: capText(shown.join('\n') + note, ctx.outputCap), isError: false, response: response(sorted.slice(0, MAX_RESULTS), sorted.length > MAX_RESULTS) };
}
