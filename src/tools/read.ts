import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { isBinaryFile } from './binary-file.js';
import { fileErrorOutput, toolError } from './file-errors.js';
import { capText } from '../text/output-cap.js';
import { readLineRange, type LineRange } from './read-lines.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './types.js';

const DEFAULT_LIMIT = 2000;
const MAX_LINE_CHARS = 2000;
/** Past this size a whole-file read would flood the context; the model must pick a range. */
const MAX_WHOLE_FILE_BYTES = 10 * 1024 * 1024;

const ReadInput = z.strictObject({
  file_path: z.string().min(1).describe('The file to read: absolute, or relative to the repository root.'),
  offset: z.number().int().min(1).optional().describe('Line number to start reading from (1-based). Only for files too long to read at once.'),
  limit: z.number().int().min(1).optional().describe(`Number of lines to read (default ${DEFAULT_LIMIT}).`),
});
export type ReadInput = z.infer<typeof ReadInput>;

export const readTool: ToolDefinition<ReadInput> = {
  name: 'Read',
  description:
    'Read a text file. Paths are relative to the repository root (or absolute). ' +
    `Returns lines numbered like \`cat -n\`, up to ${DEFAULT_LIMIT} lines from the start by default; ` +
    `lines longer than ${MAX_LINE_CHARS} characters are cut. Use offset and limit to read part of a long file. ` +
    'Cannot read directories (use Glob) or binary files.',
  kind: 'read',
  input: ReadInput,
  locations: (input, base) => [{ given: input.file_path, path: resolveToolPath(input.file_path, base), access: 'read', recursive: false, label: 'Read file_path' }],
  execute: executeRead,
};

async function executeRead(input: ReadInput, ctx: ToolContext): Promise<ToolOutput> {
  const file = resolveToolPath(input.file_path, ctx.worktree);
  const shown = displayPath(file, ctx.worktree);
  try {
    const info = await stat(file);
    if (info.isDirectory()) return toolError(`${shown} is a directory, not a file. Use Glob to list its files.`);
    if (!info.isFile()) return toolError(`${shown} is not a regular file.`);
    if (info.size > MAX_WHOLE_FILE_BYTES && input.offset === undefined && input.limit === undefined) {
      const megabytes = (info.size / (1024 * 1024)).toFixed(1);
      return toolError(
        `${shown} is ${megabytes} MB, too large to read whole. Pass offset and limit to read a range of lines, or use Grep to find what you need.`,
      );
    }
    if (await isBinaryFile(file)) return toolError(`${shown} is a binary file; Read only shows text.`);
    const firstLine = input.offset ?? 1;
    const range = await readLineRange(file, { firstLine, maxLines: input.limit ?? DEFAULT_LIMIT, maxLineChars: MAX_LINE_CHARS });
    const content = range.lines.map((line) => line.text).join('\n');
    const response = {
      type: 'text',
      file: {
        filePath: file,
        content: capText(content, ctx.outputCap),
        numLines: range.lines.length,
        startLine: firstLine,
        // Known when the read reached the end; otherwise at least the lines up to here and one more.
        totalLines: range.lineCount ?? firstLine + range.lines.length,
      },
    };
    return { content: capText(formatRange(range, firstLine, shown), ctx.outputCap), isError: false, response };
  } catch (error) {
    const output = fileErrorOutput(error, shown);
    if (output) return output;
    throw error;
  }
}

function formatRange(range: LineRange, firstLine: number, shown: string): string {
  if (range.lines.length === 0) {
    if (range.lineCount === 0) return `(${shown} is empty)`;
    return `(${shown} has ${range.lineCount} lines; offset ${firstLine} is past the end)`;
  }
  const body = range.lines.map((line) => `${String(line.number).padStart(6)}\t${line.text}`).join('\n');
  const notes: string[] = [];
  if (range.lines.some((line) => line.cut)) notes.push(`Lines longer than ${MAX_LINE_CHARS} characters were cut.`);
  if (range.moreFollow) {
    const next = range.lines[range.lines.length - 1]!.number + 1;
    notes.push(`More lines follow; read on with offset ${next}.`);
  }
  return notes.length === 0 ? body : `${body}\n\n[${notes.join(' ')}]`;
}
