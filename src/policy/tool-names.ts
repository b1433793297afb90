import { closest, distance } from 'fastest-levenshtein';

// The tool names a rule may name. corral's own tools are judged by the guard; the other
// agents' tools (Claude Code's, whose settings corral reads) are accepted so a settings
// file copied over is valid, and match nothing here: corral never offers those tools.

/** The tools corral gives the model (kept equal to src/tools by a test). */
export const CORRAL_TOOLS = ['Bash', 'Read', 'Write', 'Edit', 'Glob', 'Grep'] as const;

/** Claude Code's tools that corral does not have; a rule naming one is kept and decides nothing. */
export const OTHER_AGENT_TOOLS = [
  'Agent',
  'AskUserQuestion',
  'BashOutput',
  'EnterPlanMode',
  'EnterWorktree',
  'ExitPlanMode',
  'ExitWorktree',
  'KillBash',
  'KillShell',
  'LS',
  'LSP',
  'ListMcpResourcesTool',
  'MultiEdit',
  'NotebookEdit',
  'NotebookRead',
  'ReadMcpResourceTool',
  'Skill',
  'SlashCommand',
  'Task',
  'TaskCreate',
  'TaskGet',
  'TaskList',
  'TaskOutput',
  'TaskStop',
  'TaskUpdate',
  'TodoRead',
  'TodoWrite',
  'ToolSearch',
  'WebFetch',
  'WebSearch',
] as const;

const KNOWN: readonly string[] = [...CORRAL_TOOLS, ...OTHER_AGENT_TOOLS];

/** MCP tools (`mcp__server`, `mcp__server__tool`, `mcp__server__*`): accepted and kept for when corral speaks MCP. */
export function isMcpToolName(name: string): boolean {
  return /^mcp__[A-Za-z0-9_-]+(?:__[A-Za-z0-9_*-]*)?$/.test(name);
}

/** Whether a rule's tool is one corral judges (the others are kept and match no call). */
export function isCorralTool(name: string): boolean {
  return (CORRAL_TOOLS as readonly string[]).includes(name);
}

/**
 * Why `name` is not a tool a rule may name, with the tool it probably meant; null when
 * it is one. Case matters (`bash` matches no call), so a case slip is an error too.
 */
export function unknownToolProblem(name: string): string | null {
  if (KNOWN.includes(name) || isMcpToolName(name)) return null;
  const suggestion = suggestTool(name);
  const hint = suggestion === undefined ? `tools: ${CORRAL_TOOLS.join(', ')}, or mcp__server__tool` : `did you mean \`${suggestion}\`?`;
  return `\`${name}\` is not a tool, so the rule would match nothing (${hint})`;
}

function suggestTool(name: string): string | undefined {
  const lower = name.toLowerCase();
  const sameLetters = KNOWN.find((tool) => tool.toLowerCase() === lower);
  if (sameLetters !== undefined) return sameLetters;
  const byLower = new Map(KNOWN.map((tool) => [tool.toLowerCase(), tool]));
  const candidate = closest(lower, [...byLower.keys()]);
  const edits = distance(lower, candidate);
  return edits <= 2 && edits <= lower.length / 2 ? byLower.get(candidate) : undefined;
}
