// One way to name a tool call for a person, everywhere it is shown: the summary, the
// trace summary, `corral replay` and the approvals file all say `Bash(npm test)`.

/** `Bash(npm test)`, `Read(src/a.ts)`: the tool and its main field on one line, cut to `width`. */
export function describeCall(tool: string, input: unknown, width = 120): string {
  const fields = input !== null && typeof input === 'object' ? (input as Record<string, unknown>) : {};
  const main = fields.command ?? fields.file_path ?? fields.pattern ?? fields.path;
  // A tool without those fields (an unknown one) is shown by its whole input.
  const text = (typeof main === 'string' ? main : JSON.stringify(main ?? input ?? {})).replace(/\s+/g, ' ').trim();
  return `${tool}(${text.length > width ? `${text.slice(0, width - 1)}…` : text})`;
}
