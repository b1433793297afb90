import { unknownToolProblem } from './tool-names.js';

// The written form of a pattern rule, `Tool` or `Tool(specifier)`. MCP tool names may
// hold `-` and end in `*` (`mcp__my-server__*`).
const PATTERN = /^([A-Za-z][A-Za-z0-9_]*|mcp__[A-Za-z0-9_-]+(?:__[A-Za-z0-9_*-]*)?)(?:\((.*)\))?$/s;

/** `Tool(specifier)` split into its parts, or the reason it is not one (an unknown tool included). */
export function parsePattern(text: string): { tool: string; specifier: string | null } | string {
  const match = PATTERN.exec(text.trim());
  if (match === null) return `\`${text}\` is not a rule of the form Tool or Tool(specifier)`;
  const unknown = unknownToolProblem(match[1]!);
  if (unknown !== null) return unknown;
  const specifier = match[2] === undefined ? null : match[2].trim();
  if (specifier === '') return `\`${text}\` has an empty specifier; write \`${match[1]}\` to match every call`;
  return { tool: match[1]!, specifier: specifier === '*' ? null : specifier };
}
