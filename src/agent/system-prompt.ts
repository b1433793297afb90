import type { Ticket } from '../ticket/types.js';
import { INSTRUCTIONS_MAX_BYTES, type Instructions } from './instructions.js';

/**
 * The stable prefix of every request (cached by the API), so it holds only what stays
 * the same for the whole run.
 */
export function buildSystemPrompt(ticket: Pick<Ticket, 'allow' | 'forbid' | 'checks' | 'title'>, sandbox?: { network: boolean }, instructions?: Instructions): string {
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
- In that final message, list problems you noticed outside the task, one per line, each starting with "QUEUE:".${formatInstructions(instructions)}`;
}

/**
 * The repository's AGENTS.md and CLAUDE.md files, each labelled with its path, after
 * corral's own rules (which win where they differ: the fence is enforced, not advised).
 */
function formatInstructions(instructions: Instructions | undefined): string {
  if (instructions === undefined || (instructions.files.length === 0 && instructions.omitted.length === 0)) return '';
  const kib = INSTRUCTIONS_MAX_BYTES / 1024;
  const files = instructions.files.map((file) => {
    const cut = file.cut ? `\n[Cut here: the file is ${file.bytes} bytes and the instructions are kept under ${kib} KiB. Read ${file.path} for the rest.]` : '';
    return `<instructions path="${file.path}">\n${file.text.replace(/\n+$/, '')}${cut}\n</instructions>`;
  });
  const omitted = instructions.omitted.length > 0 ? `\n\n[Left out to keep the instructions under ${kib} KiB: ${instructions.omitted.join(', ')}. Read them if they concern your change.]` : '';
  return `

The repository's instructions for agents follow (AGENTS.md and CLAUDE.md files), root first: a file nearer to the code you change applies there before the ones above it. Follow them where they do not conflict with the rules above.

${files.join('\n\n')}${omitted}`;
}

/** The first user message: the task itself. */
export function buildTaskMessage(ticket: Pick<Ticket, 'id' | 'title' | 'task'>): string {
  const title = ticket.title ? `${ticket.title}\n\n` : '';
  return `Ticket ${ticket.id}: ${title}${ticket.task}`;
}
