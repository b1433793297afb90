import { readFile, stat, writeFile } from 'node:fs/promises';
import { z } from 'zod';
import { fileErrorOutput, toolError } from './file-errors.js';
import { structuredPatch } from './structured-patch.js';
import { displayPath, resolveToolPath } from './tool-paths.js';
import type { ToolContext, ToolDefinition, ToolOutput } from './types.js';

const EditInput = z.strictObject({
  file_path: z.string().min(1).describe('The file to change: absolute, or relative to the repository root.'),
  old_string: z.string().describe('The exact text to replace, including whitespace and indentation.'),
  new_string: z.string().describe('The text to put in its place (must differ from old_string).'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one (default false).'),
});
export type EditInput = z.infer<typeof EditInput>;

export const editTool: ToolDefinition<EditInput> = {
  name: 'Edit',
  description:
    'Replace exact text in an existing file. Paths are relative to the repository root (or absolute). ' +
    'old_string must match the file exactly and occur once, unless replace_all is set; ' +
    'include enough surrounding lines to make it unique. Read the file first.',
  kind: 'edit',
  input: EditInput,
  locations: (input, base) => [{ given: input.file_path, path: resolveToolPath(input.file_path, base), access: 'write', recursive: false, label: 'Edit file_path' }],
  execute: executeEdit,
};

async function executeEdit(input: EditInput, ctx: ToolContext): Promise<ToolOutput> {
  const file = resolveToolPath(input.file_path, ctx.worktree);
  const shown = displayPath(file, ctx.worktree);
  if (input.old_string === '') return toolError('old_string is empty. To create a file or replace all of it, use Write.');
  if (input.old_string === input.new_string) return toolError('old_string and new_string are the same; there is nothing to change.');
  try {
    if ((await stat(file)).isDirectory()) return toolError(`${shown} is a directory, not a file.`);
    const original = await readFile(file, 'utf8');
    const parts = original.split(input.old_string);
    const occurrences = parts.length - 1;
    if (occurrences === 0) {
      return toolError(`old_string was not found in ${shown}. It must match exactly, including whitespace and indentation; Read the file to check.`);
    }
    if (occurrences > 1 && input.replace_all !== true) {
      return toolError(
        `old_string occurs ${occurrences} times in ${shown}. Include more surrounding text to pick one, or set replace_all to replace them all.`,
      );
    }
    // split/join, not String.replace: `$&` and friends in new_string must stay literal.
    const updated = parts.join(input.new_string);
    await writeFile(file, updated, 'utf8');
    const noun = occurrences === 1 ? 'occurrence' : 'occurrences';
    const response = {
      filePath: file,
      oldString: input.old_string,
      newString: input.new_string,
      originalFile: original,
      structuredPatch: structuredPatch(original, updated),
      userModified: false,
      replaceAll: input.replace_all === true,
    };
    return { content: `Replaced ${occurrences} ${noun} in ${shown}.`, isError: false, response };
  } catch (error) {
    const output = fileErrorOutput(error, shown);
    if (output) return output;
    throw error;
  }
}
