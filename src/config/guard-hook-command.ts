// corral's own guard as an agent's PreToolUse hook (`corral guard install` writes it):
// recognised wherever it stands, so install finds it again and uninstall removes it, and
// corral's own runs do not run it as one more hook on top of the guard it calls.

/** The agent a `corral … guard hook --agent <agent>` command is for, however corral is named (`corral`, a path, `node …/corral.cjs`); undefined for any other command. */
export function guardHookAgent(command: string): string | undefined {
  return /(?:^|[\s/'"])corral(?:\.c?js)?['"]?\s+guard\s+hook\b.*?--agent(?:\s+|=)['"]?([a-z-]+)/.exec(command)?.[1];
}
