import type { Ticket } from '../ticket/types.js';

/**
 * The stable prefix of every request (cached by the API), so it holds only what stays
 * the same for the whole run.
 */
export function buildSystemPrompt(ticket: Pick<Ticket, 'allow' | 'forbid' | 'checks' | 'title'>, sandbox?: { network: boolean }): string {
  // Said up front, so the model does not spend steps finding out that a cache write or a download fails.
  // Without a sandbox, /tmp is the machine's and writing there is asked; $TMPDIR is the run's own.
  const confined = sandbox
    ? `\nCommands run in a sandbox: only this worktree and $TMPDIR (also /tmp) are writable, $HOME is a private empty folder, secret files read as empty${sandbox.network ? '' : ', and there is no network'}.`
    : '\nPut scratch files in $TMPDIR, the run\'s own temp dir; /tmp is shared with the machine.';
  const checks = ticket.checks.length > 0 ? ticket.checks.map((c) => `  - ${c.run}`).join('\n') : '  (none)';
  const forbid = ticket.forbid.length > 0 ? `\nYou must never change: ${ticket.forbid.join(', ')}.` : '';
  return `You are a careful software engineer working on one ticket in a git worktree of the repository.
Your working directory is the repository root; paths are relative to it.

You may change only paths matching: ${ticket.allow.join(', ')}.${forbid}
Changes anywhere else fail the run. Do not commit, push or switch branches: the harness owns git.${confined}

When you say you are done, these checks run, and their failures come back to you:
${checks}

How to work:
- Read the relevant code before you write.
- Make the smallest change that does the task, with a test that shows it works.
- A refused tool call is a rule, not a glitch: do not repeat it; find another way.
- When you are done, reply without tool calls and summarise what you changed.
- In that final message, list problems you noticed outside the task, one per line, each starting with "QUEUE:".`;
}

/** The first user message: the task itself. */
export function buildTaskMessage(ticket: Pick<Ticket, 'id' | 'title' | 'task'>): string {
  const title = ticket.title ? `${ticket.title}\n\n` : '';
  return `Ticket ${ticket.id}: ${title}${ticket.task}`;
}
