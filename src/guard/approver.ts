import { cutVisible, makeVisible } from '../report/visible.js';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { stringify } from 'yaml';
import { UNKNOWN_ARG, type CommandFact } from './facts.js';
import { commandMatches, parsePattern, pathMatcher } from './rules/patterns.js';
import type { Decision } from './rules/types.js';
import { baseName } from './shell/wrappers.js';

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
  | { approved: false; by: 'unattended' };

export interface Approver {
  /**
   * Never approves by default. Rejects only when an unattended refusal cannot be written
   * to the approvals file; the call must be refused then too.
   */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer>;
}

/** One per process: serialises prompts (parallel runs share one terminal), reads answers line by line. */
export interface TerminalPrompt {
  /**
   * Writes `lines` (the last one is the prompt, left open for the answer) and resolves with
   * the next line typed. With `accept`, an answer it rejects re-asks, at most
   * MAX_REASKS times, within the same turn; the last answer is returned either way.
   * Rejects with PromptClosedError at end of input and with the signal's reason on abort.
   */
  question(lines: string[], signal: AbortSignal, accept?: (answer: string) => boolean): Promise<string>;
  close(): void;
}

export const MAX_REASKS = 3;

export class PromptClosedError extends Error {
  constructor() {
    super('the input closed before an answer was given');
    this.name = 'PromptClosedError';
  }
}

/**
 * Reads lines without raw mode (Ctrl-C stays a signal). A line typed while no question is
 * waiting is dropped, so type-ahead never answers a prompt the person has not seen. The
 * input holds the process open only while a question waits.
 */
export function createTerminalPrompt(input: NodeJS.ReadableStream, output: NodeJS.WritableStream): TerminalPrompt {
  let reader: Interface | undefined;
  let ended = false;
  let waiting: { resolve: (line: string) => void; reject: (error: unknown) => void } | undefined;
  let turn: Promise<unknown> = Promise.resolve();
  const handle = input as { ref?: () => void; unref?: () => void };

  const settle = (action: (w: NonNullable<typeof waiting>) => void): void => {
    const current = waiting;
    waiting = undefined;
    if (current) action(current);
  };
  const open = (): void => {
    if (reader !== undefined) return;
    reader = createInterface({ input, terminal: false, crlfDelay: Infinity });
    reader.on('line', (line) => settle((w) => w.resolve(line)));
    reader.on('close', () => {
      ended = true;
      settle((w) => w.reject(new PromptClosedError()));
    });
  };
  const readLine = (signal: AbortSignal): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      if (ended) return reject(new PromptClosedError());
      if (signal.aborted) return reject(signal.reason);
      const onAbort = (): void => settle((w) => w.reject(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      const done = (): void => signal.removeEventListener('abort', onAbort);
      waiting = {
        resolve: (line) => (done(), resolve(line)),
        reject: (error) => (done(), reject(error)),
      };
    });

  return {
    async question(lines, signal, accept) {
      const previous = turn;
      let finished!: () => void;
      const mine = new Promise<void>((resolve) => (finished = resolve));
      // The next question waits for this one and every one before it, even if this one is aborted while queued.
      turn = Promise.all([previous, mine]);
      try {
        await untilAborted(previous, signal);
        open();
        handle.ref?.();
        output.write(lines.join('\n'));
        let answer = await readLine(signal);
        for (let again = 0; accept !== undefined && !accept(answer) && again < MAX_REASKS; again += 1) {
          output.write(`Please answer with one of the letters in brackets.\n${lines.at(-1) ?? ''}`);
          answer = await readLine(signal);
        }
        return answer;
      } catch (error) {
        // Leave the terminal on a fresh line after an interrupted prompt.
        if (!(error instanceof QueueAbort)) output.write('\n');
        throw error instanceof QueueAbort ? error.reason : error;
      } finally {
        handle.unref?.();
        finished();
      }
    },
    close() {
      ended = true;
      settle((w) => w.reject(new PromptClosedError()));
      reader?.close();
      reader = undefined;
    },
  };
}

/** Aborted while waiting in the queue: nothing was written yet. */
class QueueAbort {
  constructor(readonly reason: unknown) {}
}

function untilAborted(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(new QueueAbort(signal.reason));
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(new QueueAbort(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => (signal.removeEventListener('abort', onAbort), resolve()),
      () => (signal.removeEventListener('abort', onAbort), resolve()),
    );
  });
}

/** One per run: remembers "always for this run" answers; without a prompt, records each refusal for a person to review. */
export function createApprover(options: { prompt?: TerminalPrompt; approvalsFile: string }): Approver {
  const remembered = new Set<string>();
  let folderMade = false;
  // One request at a time, so an "always" answered for one covers a same-key request waiting behind it.
  let turn: Promise<unknown> = Promise.resolve();

  const decideOne = async (request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> => {
    const key = approvalKey(request);
    if (remembered.has(key)) return { approved: true, by: 'remembered' };
    if (options.prompt === undefined) {
      const entry = stringify([refusalEntry(request)], { lineWidth: 0 });
      if (!folderMade) {
        await mkdir(path.dirname(options.approvalsFile), { recursive: true });
        folderMade = true;
      }
      await appendEntry(options.approvalsFile, entry);
      return { approved: false, by: 'unattended' };
    }
    let answer: string;
    try {
      answer = await options.prompt.question(promptLines(request), signal, (text) => parseAnswer(text) !== undefined);
    } catch {
      // End of input or Ctrl-C: nobody said yes.
      return { approved: false, by: 'person' };
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
          return { approved: false, by: 'person' } as const;
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

function showArgv(argv: string[]): string {
  return argv.map((word) => (/^[A-Za-z0-9_@%+=:,./<>-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)).join(' ');
}

/** What "always this run" covers, in words. */
function coverage(request: ApprovalRequest): string {
  const scope = request.decision.rule;
  const prefixes = bashPrefixes(request);
  if (request.tool === 'Bash') {
    if (prefixes === null) return `${scope}, this exact command`;
    return `${scope}, commands ${prefixes.map((words) => `\`${showArgv(words)}${words.length > 1 ? ' …' : ''}\``).join(' and ')}`;
  }
  if (request.paths.length === 0) return `${scope}, this exact call`;
  return `${scope}, ${request.tool} ${request.paths.map((file) => shownPath(file, request.worktree)).join(', ')}`;
}

/** The first two words of each parsed command, sorted and unique; null when a word is only known when it runs. */
function bashPrefixes(request: ApprovalRequest): string[][] | null {
  if (request.commands.length === 0) return null;
  const prefixes = new Map<string, string[]>();
  for (const argv of request.commands) {
    const words = argv.slice(0, 2);
    if (words.length === 0 || words.includes(UNKNOWN_ARG)) return null;
    prefixes.set(JSON.stringify(words), words);
  }
  return [...prefixes.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, words]) => words);
}

/**
 * What "always for this run" remembers: the deciding rule, and for Bash the first two
 * words of each command (`npm install`), for other tools the tool and its paths. A call
 * with a word only known when it runs, or with no command or path, is remembered only as
 * exactly itself.
 */
export function approvalKey(request: ApprovalRequest): string {
  const rule = [request.decision.scope, request.decision.rule, request.tool];
  if (request.tool === 'Bash') {
    const prefixes = bashPrefixes(request);
    return JSON.stringify([...rule, prefixes ?? { exact: request.input.command ?? request.input }]);
  }
  if (request.paths.length === 0) return JSON.stringify([...rule, { exact: request.input }]);
  return JSON.stringify([...rule, [...new Set(request.paths)].sort()]);
}

function shownPath(file: string, worktree: string): string {
  const relative = path.relative(worktree, file);
  return makeVisible(isInside(relative) ? relative || '.' : file);
}

function isInside(relative: string): boolean {
  return relative !== '..' && !relative.startsWith('../') && !path.isAbsolute(relative);
}

const PATH_TOOLS = new Set(['Read', 'Write', 'Edit', 'Glob', 'Grep']);

interface AllowPlan {
  rules: string[];
  /** Parts of the call no allow rule can express, and why. */
  gaps: string[];
}

/** Allow rules that match exactly this call, each checked against the real matcher before it is offered. */
export function suggestedAllowRules(request: ApprovalRequest): string[] {
  return planAllowRules(request).rules;
}

function planAllowRules(request: ApprovalRequest): AllowPlan {
  const plan: AllowPlan = { rules: [], gaps: [] };
  const add = (result: { rule: string } | { gap: string }): void => {
    if ('gap' in result) plan.gaps.push(result.gap);
    else if (!plan.rules.includes(result.rule)) plan.rules.push(result.rule);
  };
  if (request.tool === 'Bash') {
    if (request.commands.length === 0) plan.gaps.push('No allow rule is suggested: no command could be read from this call.');
    for (const argv of request.commands) add(bashRule(argv));
  } else if (PATH_TOOLS.has(request.tool)) {
    if (request.paths.length === 0) plan.gaps.push('No allow rule is suggested: the call names no path.');
    for (const file of request.paths) add(pathRule(request.tool, file, request.worktree));
  } else {
    plan.gaps.push(`No allow rule is suggested for the ${makeVisible(request.tool)} tool.`);
  }
  return plan;
}

const GLOB_SPECIAL = /[\\*?[\]{}()!+@|]/g;

function escapeGlob(text: string): string {
  return text.replace(GLOB_SPECIAL, (char) => `\\${char}`);
}

/** `Bash(<words>)` matching exactly `argv`: words split on whitespace, a word with `*` is a glob (escaped here). */
function bashRule(argv: string[]): { rule: string } | { gap: string } {
  const shown = `\`${cutVisible(showArgv(argv), 120)}\``;
  const gap = (why: string): { gap: string } => ({ gap: `No allow rule is suggested for ${shown}: ${why}.` });
  if (argv.length === 0) return gap('it is empty');
  if (argv.includes(UNKNOWN_ARG)) return gap('part of it is only known when it runs, and an allow rule never covers that');
  // The guard matches a command by its name (basename), so `./build.sh` is `build.sh`.
  const name = baseName(argv[0]!);
  const words = [name, ...argv.slice(1)];
  if (words.some((word) => word === '' || /\s/u.test(word))) return gap('a word in it is empty or holds whitespace, which a pattern cannot express');
  const specifier = words.map((word) => (word.includes('*') ? escapeGlob(word) : word)).join(' ');
  const rule = `Bash(${specifier})`;
  const parsed = parsePattern(rule);
  const fact = { name, argv } as CommandFact;
  if (typeof parsed === 'string' || parsed.tool !== 'Bash' || parsed.specifier !== specifier || !commandMatches(specifier, fact, false)) {
    return gap('a pattern cannot express its words exactly');
  }
  return { rule };
}

/** `Tool(<path>)`: relative to the worktree when inside it, absolute otherwise, glob characters escaped. */
function pathRule(tool: string, file: string, worktree: string): { rule: string } | { gap: string } {
  const relative = path.relative(worktree, file);
  let specifier = isInside(relative) ? relative || '.' : file;
  // `~` starts a home path in a rule; `./` keeps a file named so in the worktree.
  if (specifier === '~' || specifier.startsWith('~/')) specifier = `./${specifier}`;
  specifier = escapeGlob(specifier);
  const rule = `${tool}(${specifier})`;
  const parsed = parsePattern(rule);
  if (typeof parsed === 'string' || parsed.tool !== tool || parsed.specifier !== specifier || !pathMatcher(specifier, null, worktree)(file)) {
    return { gap: `No allow rule is suggested for ${tool} ${cutVisible(file, 120)}: a pattern cannot express that path exactly.` };
  }
  return { rule };
}

/** One item of the approvals file. */
export function refusalEntry(request: ApprovalRequest): Record<string, unknown> {
  const plan = planAllowRules(request);
  const entry: Record<string, unknown> = {
    call: describeCall(request),
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

/** `Bash(npm install lodash)`: one line, cut. */
function describeCall(request: ApprovalRequest): string {
  const input = request.input;
  const main = input.command ?? input.file_path ?? input.pattern ?? input.path ?? '';
  return `${makeVisible(request.tool)}(${cutVisible(typeof main === 'string' ? main : JSON.stringify(main), 200)})`;
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
