import type { ToolOutput } from './types.js';

// File-system failures are something the model can act on (wrong path, a directory,
// no permission), so they go back as an error result, never as an exception.

export function toolError(message: string): ToolOutput {
  return { content: message, isError: true };
}

/** An error result for a failed file operation, or undefined when `error` is not one (a bug: rethrow it). */
export function fileErrorOutput(error: unknown, shownPath: string): ToolOutput | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (typeof code !== 'string') return undefined;
  switch (code) {
    case 'ENOENT':
      return toolError(`File does not exist: ${shownPath}`);
    case 'EISDIR':
      return toolError(`${shownPath} is a directory, not a file.`);
    case 'ENOTDIR':
      return toolError(`A part of ${shownPath} is not a directory.`);
    case 'EACCES':
    case 'EPERM':
      return toolError(`Permission denied: ${shownPath}`);
    default:
      return toolError(`Cannot access ${shownPath}: ${(error as Error).message}`);
  }
}
