import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { fileErrorOutput, toolError } from './file-errors.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './types.js';

const WriteInput = z.strictObject({
  file_path: z.string().min(1).describe('The file to write: absolute, or relative to the repository root.'),
  content: z.string().describe('The complete new content of the file.'),
});
export type WriteInput = z.infer<typeof WriteInput>;

export const writeTool: ToolDefinition<WriteInput> = {
  name: 'Write',
  description:
    'Create a file or replace its whole content. Paths are relative to the repository root (or absolute); ' +
    'missing parent directories are created. To change part of an existing file, prefer Edit.',
  kind: 'edit',
  input: WriteInput,
  locations: (input, base) => [{ given: input.file_path, path: resolveToolPath(input.file_path, base), access: 'write', recursive: false, label: 'Write file_path' }],
  execute: executeWrite,
};

async function executeWrite(input: WriteInput, ctx: ToolContext): Promise<ToolOutput> {
  const file = resolveToolPath(input.file_path, ctx.worktree);
  const shown = displayPath(file, ctx.worktree);
  try {
    const existed = await isExisting(file);
    if (existed === 'directory') return toolError(`${shown} is a directory; give a file path.`);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, input.content, 'utf8');
    const bytes = Buffer.byteLength(input.content, 'utf8');
    return { content: `${existed === 'file' ? 'Overwrote' : 'Created'} ${shown} (${bytes} bytes).`, isError: false };
  } catch (error) {
    const output = fileErrorOutput(error, shown);
    if (output) return output;
    throw error;
  }
}

async function isExisting(file: string): Promise<'file' | 'directory' | undefined> {
  try {
    return (await stat(file)).isDirectory() ? 'directory' : 'file';
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
