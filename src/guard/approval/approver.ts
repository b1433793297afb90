import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { redactSecrets, redactValue, type Redactor } from '../../text/redact.js';
import { describeCall } from '../../text/describe-call.js';
import { cutVisible, makeVisible } from '../../text/visible.js';
import type { Decision } from '../../policy/types.js';
import { approvalKey, coverage, isInside, planAllowRules, showArgv, type AllowPlan } from './allow-rules.js';
import { untilAborted, type TerminalPrompt } from './terminal-prompt.js';

// The approver: what happens to a call the guard asked about. A person answers at a
// terminal, "always" is remembered for the run, and an unattended refusal is written
// to the approvals file as paste-ready allow rules.

export interface ApprovalRequest {
  ticketId: string;
  step: number;
  /** 'Bash', 'Read', 'Edit', ... */
  tool: string;
  /** The tool input as the model sent it. */
  input: Record<string, unknown>;
  /** Its effect is 'ask'. */
  decision: Decision;
  /** For Bash: argv of each parsed simple command (wrappers already peeled); [] for other tools. */
  commands: string[][];
  /** Resolved absolute paths the call touches (may be empty). */
  paths: string[];
  /** To show and suggest paths relative to it. */
  worktree: string;
}

export type ApprovalAnswer =
  | { approved: true; by: 'person'; scope: 'once' | 'run' }
  /** An earlier "always for this run" covered it. */
  | { approved: true; by: 'remembered' }
  /** Said no, pressed Enter, closed the input or interrupted the prompt. */
  | { approved: false; by: 'person' }
  /** Nobody to ask. */
  | { approved: false; by: 'unattended' }
  /** The run was interrupted while the question waited. */
  | { approved: false; by: 'interrupted' };

export interface Approver {
  /**
   * Never approves by default. Rejects only when an unattended refusal cannot be written
   * to the approvals file; the call must be refused then too.
   */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** One per run: remembers "always for this run" answers; without a prompt, records each refusal for a person to review. */
export function createApprover(options: { prompt?: TerminalPrompt; approvalsFile: string; redact?: Redactor }): Approver {
  // A key in a command must not reach the terminal or the approvals file either.
  const redact = options.redact ?? redactSecrets;
  const remembered = new Set<string>();
  let folderMade = false;
  // One request at a time, so an "always" answered for one covers a same-key request waiting behind it.
  let turn: Promise<unknown> = Promise.resolve();

  const decideOne = async (request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> => {
    const key = approvalKey(request);
    if (remembered.has(key)) return { approved: true, by: 'remembered' };
    if (options.prompt === undefined) {
      const entry = stringify([redactValue(refusalEntry(request), redact)], { lineWidth: 0 });
      if (!folderMade) {
        await mkdir(path.dirname(options.approvalsFile), { recursive: true });
        folderMade = true;
      }
      await appendEntry(options.approvalsFile, entry);
      return { approved: false, by: 'unattended' };
    }
    let answer: string;
    try {
      answer = await options.prompt.question(promptLines(request).map(redact), signal, (text) => parseAnswer(text) !== undefined);
    } catch {
      // End of input or Ctrl-C: nobody said yes.
      return { approved: false, by: signal.aborted ? 'interrupted' : 'person' };
    }
    const choice = parseAnswer(answer) ?? 'no';
    if (choice === 'no') return { approved: false, by: 'person' };
    if (choice === 'run') remembered.add(key);
    return { approved: true, by: 'person', scope: choice };
  };

  return {
    async ask(request, signal) {
      const previous = turn;
      const result = (async () => {
        try {
          await untilAborted(previous, signal);
        } catch {
          return { approved: false, by: 'interrupted' } as const;
        }
        return decideOne(request, signal);
      })();
      turn = Promise.all([previous, result.catch(() => undefined)]);
      return result;
    },
  };
}

/** The header on the first entry: one write, `wx`, so a file written earlier is appended to, never restarted. */
async function appendEntry(file: string, entry: string): Promise<void> {
  try {
    await writeFile(file, `${APPROVALS_HEADER}\n${entry}`, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    await appendFile(file, `\n${entry}`);
  }
}

export const APPROVALS_HEADER = [
  '# corral: calls refused because they needed approval and nobody was at a terminal.',
  '#',
  '# The run was unattended, so every call the guard asked about was refused. Each item',
  '# below is one such call: what it was, the step, the rule that asked and why.',
  '# To let a call like it run next time without asking, read it, then copy the patterns',
  '# under its `allow:` into the `policy: allow:` list of the ticket, of the project\'s',
  '# corral.yaml or of ~/.config/corral/config.yaml.',
  '# Read an item\'s `note` first: it says what the patterns leave out, or that no allow',
  '# rule can lift the ask (deny beats ask beats allow), so the call needs a person at a',
  '# terminal (run corral there and answer the prompt) or a change to the rule that asked.',
  '# This file is YAML: a list with one item per refused call.',
  '',
].join('\n');

type Choice = 'once' | 'run' | 'no';

function parseAnswer(text: string): Choice | undefined {
  switch (text.trim().toLowerCase()) {
    case 'y':
    case 'yes':
      return 'once';
    case 'a':
    case 'always':
      return 'run';
    case '':
    case 'n':
    case 'no':
      return 'no';
    default:
      return undefined;
  }
}

/** What the person reads before answering. */
export function promptLines(request: ApprovalRequest): string[] {
  const { decision } = request;
  const lines = [`corral: ticket ${makeVisible(request.ticketId)}, step ${request.step}: a call needs approval`];
  lines.push(...showCall(request.tool, request.input).map((line) => `  ${line}`));
  if (request.tool === 'Bash') lines.push(`  parsed commands: ${cutVisible(request.commands.map(showArgv).join(' ; ') || '(none)')}`);
  lines.push(`  rule: ${askedBy(decision)}`);
  lines.push(`  reason: ${cutVisible(decision.reason)}`);
  lines.push(`Allow? [y]es once, [a]lways this run (${cutVisible(coverage(request))}), [N]o: `);
  return lines;
}

function askedBy(decision: Decision): string {
  return makeVisible(`${decision.rule} (${decision.scope}${decision.source ? `, ${decision.source}` : ''})`);
}

/** The tool name, then each input field on its own line, cut and with hidden characters shown. */
export function showCall(tool: string, input: Record<string, unknown>): string[] {
  const fields = Object.entries(input).map(([name, value]) => `  ${makeVisible(name)}: ${cutVisible(typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value)))}`);
  return [makeVisible(tool), ...fields];
}

/** One item of the approvals file. */
export function refusalEntry(request: ApprovalRequest): Record<string, unknown> {
  const plan = planAllowRules(request);
  const entry: Record<string, unknown> = {
    call: makeVisible(describeCall(request.tool, request.input, 200)),
    step: request.step,
    ticket: request.ticketId,
    asked_by: askedBy(request.decision),
    reason: makeVisible(request.decision.reason),
    allow: plan.rules,
  };
  const note = refusalNote(request, plan);
  if (note !== undefined) entry.note = note;
  return entry;
}


/** Why the suggested allow rules may not be enough. */
function refusalNote(request: ApprovalRequest, plan: AllowPlan): string | undefined {
  const notes: string[] = [];
  const { decision } = request;
  if (decision.rule !== 'default') {
    const where = decision.scope === 'baseline' ? "it is part of corral's baseline" : decision.source ? `it is written in ${decision.source}` : `it is a ${decision.scope} rule`;
    notes.push(
      `An allow rule will not lift this ask: the guard weighs deny over ask over allow, and the ask came from rule ${makeVisible(decision.rule)} (${where}).`,
      decision.scope === 'baseline' ? 'It needs a person at a terminal.' : 'It needs a person at a terminal, or a change to that ask rule.',
    );
  }
  notes.push(...plan.gaps);
  if (request.tool === 'Bash' && decision.rule === 'default') {
    const outside = request.paths.filter((file) => !isInside(path.relative(request.worktree, file)));
    if (outside.length > 0) {
      notes.push(
        `The call also touches ${outside.map((file) => cutVisible(file, 120)).join(', ')}, outside the worktree; if that is what was asked about, a Bash rule does not cover it: add a Read(...) or Edit(...) rule for the path.`,
      );
    }
  }
  return notes.length > 0 ? notes.join(' ') : undefined;
}
