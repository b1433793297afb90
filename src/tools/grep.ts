import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { isSecret } from '../policy/protected-paths.js';
import { looksBinary } from './binary-file.js';
import { toolError } from './file-errors.js';
import { formatContent, type ContentOptions } from './grep-content.js';
import { compileGrepRegex, findMatches, type FileMatches, type GrepRegex } from './grep-matcher.js';
import { sortNewestFirst } from './newest-first.js';
import { capText } from '../text/output-cap.js';
import { searchRootLabel, statSearchRoot } from './search-root.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './types.js';

/** Larger files are generated or data, not code to read; searching them wastes time and memory. */
const MAX_FILE_BYTES = 5 * 1024 * 1024;
const contextLines = z.number().int().min(0);

const GrepInput = z.strictObject({
  pattern: z.string().min(1).describe('JavaScript regular expression to search for, e.g. "function\\\\s+load".'),
  path: z.string().min(1).optional().describe('File or directory to search, relative to the repository root (default: the root).'),
  glob: z.string().min(1).optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.{js,jsx}".'),
  output_mode: z
    .enum(['content', 'files_with_matches', 'count'])
    .optional()
    .describe('"files_with_matches" (default) lists files, "content" shows matching lines, "count" counts matches per file.'),
  '-i': z.boolean().optional().describe('Ignore case.'),
  '-n': z.boolean().optional().describe('Show line numbers in content mode (default true).'),
  '-A': contextLines.optional().describe('Lines of context after each match (content mode).'),
  '-B': contextLines.optional().describe('Lines of context before each match (content mode).'),
  '-C': contextLines.optional().describe('Lines of context before and after each match (content mode).'),
  head_limit: z.number().int().min(1).optional().describe('Return only the first N lines or entries.'),
  multiline: z.boolean().optional().describe('Let the pattern span lines; `.` then matches newlines too.'),
});
export type GrepInput = z.infer<typeof GrepInput>;

export const grepTool: ToolDefinition<GrepInput> = {
  name: 'Grep',
  description:
    'Search file contents with a JavaScript regular expression. Searches the repository root, or `path` ' +
    '(a file or directory relative to the root); `glob` filters files. Skips .git, node_modules, secret files (.env, keys), binary files ' +
    'and files over 5 MB. Paths in results are relative to the repository root.',
  kind: 'search',
  input: GrepInput,
  locations: (input, base) => [
    {
      given: input.path ?? '.',
      path: resolveToolPath(input.path ?? '.', base),
      access: 'read',
      recursive: true,
      label: 'Grep tool path (skips secret files)',
      ...(input.glob === undefined ? {} : { filter: input.glob }),
    },
  ],
  execute: executeGrep,
};

interface FileResult {
  file: string;
  matches: FileMatches;
}

async function executeGrep(input: GrepInput, ctx: ToolContext): Promise<ToolOutput> {
  const compiled = compileGrepRegex(input.pattern, { ignoreCase: input['-i'] === true, multiline: input.multiline === true });
  if ('error' in compiled) return toolError(`Invalid regular expression: ${compiled.error}`);

  const root = resolveToolPath(input.path ?? '.', ctx.worktree);
  const shownRoot = displayPath(root, ctx.worktree);
  const searchRoot = await statSearchRoot(root, shownRoot);
  if (searchRoot.kind === 'error') return searchRoot.output;

  const candidates = searchRoot.kind === 'file' ? [root] : await listFiles(root, ctx.signal);
  const files = filterByGlob(candidates, searchRoot.kind === 'file' ? path.dirname(root) : root, input.glob);
  const mode = input.output_mode ?? 'files_with_matches';
  const results: FileResult[] = [];
  let skipped = 0;
  for (const file of files) {
    if (ctx.signal.aborted) return toolError('The search was interrupted.');
    const matches = await searchFile(file, compiled);
    if (matches === 'skipped') skipped++;
    else if (matches.matchCount > 0) results.push({ file, matches });
  }

  if (results.length === 0) {
    const note = skipped > 0 ? ` (${skipped} binary or oversized ${skipped === 1 ? 'file was' : 'files were'} skipped)` : '';
    const response = mode === 'files_with_matches' ? { mode, filenames: [], numFiles: 0 } : { mode, numFiles: 0, filenames: [], content: '', ...(mode === 'count' ? { numMatches: 0 } : { numLines: 0 }) };
    return { content: `No matches for ${input.pattern} in ${searchRootLabel(shownRoot)}${note}.`, isError: false, response };
  }
  const { text, response } = await formatResults(results, mode, input, ctx.worktree, ctx.outputCap);
  return { content: capText(text, ctx.outputCap), isError: false, response };
}

async function listFiles(root: string, signal: AbortSignal): Promise<string[]> {
  // Loaded with the first search: a run that never searches never pays for it.
  const { glob } = await import('tinyglobby');
  const files = await glob('**/*', {
    cwd: root,
    absolute: true,
    dot: true,
    onlyFiles: true,
    followSymbolicLinks: false,
    ignore: ['**/.git', '**/.git/**', '**/node_modules/**'],
    signal,
  });
  // A directory search never reads a secret file; the guard relies on this.
  return files.filter((file) => !isSecret(file)).sort();
}

function filterByGlob(files: string[], base: string, pattern: string | undefined): string[] {
  if (pattern === undefined) return files;
  // Like ripgrep's --glob: a pattern without a slash matches the file name at any depth.
  const matches = picomatch(pattern, { dot: true, basename: !pattern.includes('/') });
  return files.filter((file) => matches(path.relative(base, file).split(path.sep).join('/')));
}

async function searchFile(file: string, regex: GrepRegex): Promise<FileMatches | 'skipped'> {
  try {
    if ((await stat(file)).size > MAX_FILE_BYTES) return 'skipped';
    const bytes = await readFile(file);
    if (looksBinary(bytes)) return 'skipped';
    return findMatches(bytes.toString('utf8'), regex);
  } catch {
    // Unreadable or vanished since the walk: not something to stop a whole search for.
    return 'skipped';
  }
}

async function formatResults(
  results: FileResult[],
  mode: NonNullable<GrepInput['output_mode']>,
  input: GrepInput,
  worktree: string,
  outputCap: number,
): Promise<{ text: string; response: Record<string, unknown> }> {
  const limit = input.head_limit ?? Infinity;
  const shown = (file: string): string => displayPath(file, worktree);
  switch (mode) {
    case 'files_with_matches': {
      const sorted = await sortNewestFirst(results.map((result) => result.file));
      const listed = sorted.slice(0, limit).map(shown);
      // Claude Code's Grep result, which PostToolUse hooks get as tool_response.
      const response = { mode, filenames: listed, numFiles: listed.length };
      return { text: `Found ${plural(sorted.length, 'file')}\n${listed.join('\n')}${limitNote(sorted.length, listed.length)}`, response };
    }
    case 'count': {
      const listed = results.slice(0, limit).map((result) => `${shown(result.file)}:${result.matches.matchCount}`);
      const total = results.reduce((sum, result) => sum + result.matches.matchCount, 0);
      const unit = input.multiline === true ? 'match' : 'matching line';
      const response = { mode, numFiles: results.length, filenames: [], content: listed.join('\n'), numMatches: total };
      return { text: `${listed.join('\n')}${limitNote(results.length, listed.length)}\n\nFound ${plural(total, unit)} in ${plural(results.length, 'file')}.`, response };
    }
    case 'content': {
      const options: ContentOptions = {
        before: input['-B'] ?? input['-C'] ?? 0,
        after: input['-A'] ?? input['-C'] ?? 0,
        lineNumbers: input['-n'] ?? true,
        headLimit: input.head_limit,
        outputCap,
      };
      const text = formatContent(
        results.map((result) => ({ shownPath: shown(result.file), matches: result.matches })),
        options,
      );
      const response = { mode, numFiles: results.length, filenames: [], content: text, numLines: text === '' ? 0 : text.split('\n').length };
      return { text, response };
    }
  }
}

function limitNote(total: number, listed: number): string {
  return listed < total ? `\n[Showing ${listed} of ${total}; raise head_limit to see more.]` : '';
}

function plural(count: number, noun: string): string {
  if (count === 1) return `1 ${noun}`;
  return `${count} ${noun.endsWith('ch') ? `${noun}es` : `${noun}s`}`;
}
