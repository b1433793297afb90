import { describeCall } from '../text/describe-call.js';
import { capText } from '../text/output-cap.js';

// What a compacted conversation keeps of the turns it drops, built mechanically from what
// the loop saw (no model call): the same run always makes the same summary, it costs
// nothing, and a replay makes it again. Its size is bounded however long the run: the
// newest calls in full and counts for the rest, each text capped.

/** The guard's word on a call, as its driver reports it. */
export interface CallVerdict {
  effect: 'allow' | 'ask' | 'deny';
  rule: string;
  /** For an ask: whether it was approved. */
  approved?: boolean;
}

export interface NotedCall {
  step: number;
  tool: string;
  input: unknown;
  verdict?: CallVerdict;
  /** Answered without running (cut at the output limit). */
  notRun?: boolean;
  isError: boolean;
  /** The result's text; only its status is kept. */
  content: string;
}

/** Calls listed one by one in a summary; older ones are counted. */
const CALLS_LISTED = 60;
/** Files listed by name, per list. */
const FILES_LISTED = 100;
/** The cap on each text a summary quotes (the last feedback, the last words). */
const TEXT_CAP = 4 * 1024;
/** The cap on the task: it is the point of the run, so it gets more room. */
const TASK_CAP = 32 * 1024;
const INPUT_WIDTH = 100;
const STATUS_WIDTH = 100;

const READS = new Set(['Read']);
const WRITES = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

interface CallLine {
  step: number;
  text: string;
}

/** The running record a summary is made from: one per run, fed as the loop goes. */
export class ContextLedger {
  private readonly calls: CallLine[] = [];
  private callCount = 0;
  private readonly perTool = new Map<string, number>();
  private refused = 0;
  private readonly read = new Set<string>();
  private readonly written = new Set<string>();
  private failedRounds = 0;
  private feedback = '';
  private hookFeedback = '';
  private lastText = '';
  private readonly task: string;

  constructor(task: string) {
    this.task = capText(task, TASK_CAP);
  }

  call(call: NotedCall): void {
    this.callCount += 1;
    this.perTool.set(call.tool, (this.perTool.get(call.tool) ?? 0) + 1);
    const verdict = verdictText(call);
    const ran = !call.notRun && (call.verdict === undefined || call.verdict.effect === 'allow' || call.verdict.approved === true);
    if (!ran) this.refused += 1;
    const status = ran ? statusText(call) : '';
    this.calls.push({ step: call.step, text: `${describeCall(call.tool, call.input, INPUT_WIDTH)} — ${verdict}${status ? ` — ${status}` : ''}` });
    if (this.calls.length > CALLS_LISTED) this.calls.shift();
    if (ran && !call.isError) {
      const file = filePathOf(call.input);
      if (file !== undefined && READS.has(call.tool)) this.read.add(file);
      if (file !== undefined && WRITES.has(call.tool)) this.written.add(file);
    }
  }

  /** Feedback from failed checks, as the model got it. */
  checksFailed(feedback: string): void {
    this.failedRounds += 1;
    this.feedback = capText(feedback, TEXT_CAP);
  }

  /** A Stop hook's reason to go on, as the model got it. */
  stopBlocked(reason: string): void {
    this.hookFeedback = capText(reason, TEXT_CAP);
  }

  /** The agent's latest non-empty text. */
  said(text: string): void {
    this.lastText = text;
  }

  /** The one user message that stands for the `turns` assistant turns dropped so far. */
  summary(turns: number): string {
    const parts: string[] = [
      `[corral compacted this conversation to keep it within the model's context window: the first ${turns} of your turns are replaced by this summary, made from the record of the run. The files are as your calls left them; read one again rather than trust memory, and repeat a call if you need its output.]`,
      `## The task\n${this.task}`,
    ];
    const older = this.callCount - this.calls.length;
    const tools = [...this.perTool].map(([tool, n]) => `${tool} ${n}`).join(', ');
    const heading = `## Your calls so far: ${this.callCount} (${tools || 'none'})${this.refused > 0 ? `, ${this.refused} not run (denied, refused or cut)` : ''}`;
    const listed = this.calls.map((line) => `- step ${line.step}: ${line.text}`);
    parts.push([heading, ...(older > 0 ? [`(the ${older} before these are counted above only)`] : []), ...listed].join('\n'));
    parts.push(`## Files\nread: ${fileList(this.read)}\nwritten or edited: ${fileList(this.written)}`);
    if (this.failedRounds > 0) parts.push(`## Check feedback (${this.failedRounds} failed round${this.failedRounds === 1 ? '' : 's'}; the latest)\n${this.feedback}`);
    if (this.hookFeedback) parts.push(`## The latest Stop hook feedback\n${this.hookFeedback}`);
    if (this.lastText) parts.push(`## Your last words\n${capText(this.lastText, TEXT_CAP)}`);
    parts.push('Go on with the task from here.');
    return parts.join('\n\n');
  }
}

function verdictText(call: NotedCall): string {
  if (call.notRun) return 'not run (cut at the output limit)';
  const verdict = call.verdict;
  if (verdict === undefined) return 'run';
  if (verdict.effect === 'allow') return `allowed (${verdict.rule})`;
  if (verdict.effect === 'deny') return `denied (${verdict.rule})`;
  return `${verdict.approved ? 'approved' : 'refused'} on ask (${verdict.rule})`;
}

/** `ok`, or the line that says how it failed (a command's exit code is its last line). */
function statusText(call: NotedCall): string {
  if (!call.isError) return 'ok';
  const lines = call.content.trimEnd().split('\n');
  const line = (call.tool === 'Bash' ? lines.at(-1) : lines[0]) ?? '';
  const cut = line.length > STATUS_WIDTH ? `${line.slice(0, STATUS_WIDTH - 1)}…` : line;
  return `error: ${cut}`;
}

function filePathOf(input: unknown): string | undefined {
  if (input === null || typeof input !== 'object') return undefined;
  const fields = input as Record<string, unknown>;
  const file = fields.file_path ?? fields.notebook_path;
  return typeof file === 'string' && file !== '' ? file : undefined;
}

function fileList(files: ReadonlySet<string>): string {
  if (files.size === 0) return 'none';
  const all = [...files];
  const shown = all.slice(-FILES_LISTED);
  return `${shown.join(', ')}${all.length > shown.length ? ` (and ${all.length - shown.length} earlier)` : ''}`;
}
