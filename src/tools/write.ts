import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { fileErrorOutput, toolError } from './file-errors.js';
import { structuredPatch } from './structured-patch.js';
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
    // For the hooks' tool_response only: a file that cannot be read as it was still gets written.
    const original = existed === 'file' ? await readFile(file, 'utf8').catch(() => null) : null;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, input.content, 'utf8');
    const bytes = Buffer.byteLength(input.content, 'utf8');
    const response = {
      type: existed === 'file' ? 'update' : 'create',
      filePath: file,
      content: input.content,
      structuredPatch: original === null ? [] : structuredPatch(original, input.content),
      originalFile: original,
    };
    return { content: `${existed === 'file' ? 'Overwrote' : 'Created'} ${shown} (${bytes} bytes).`, isError: false, response };
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
