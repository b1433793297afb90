import { readFile } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { UsageError, type Problem } from '../errors.js';
import type { Model, ModelRequest, ModelTurn } from './model.js';
import type { TurnBlock } from '../trace/records.js';
import { createRunningSum, createJsonSizer } from './json-size.js';
import type { ReplayTurn } from './trace-replay.js';

const ReplayTurn = z.strictObject({
  text: z.string().optional(),
  tools: z.array(z.record(z.string(), z.unknown()).refine((m) => Object.keys(m).length === 1, 'each tool is a one-key map: ToolName: {input}')).optional(),
});
const ReplayScriptFile = z.strictObject({ turns: z.array(ReplayTurn) });

/**
 * What a replay model plays. A YAML script's turns are picked by the number of assistant
 * messages so far; a recorded trace's by the number of calls, so every recorded response
 * (an empty one, a paused turn) comes back exactly once, in order.
 */
export interface ReplayScript {
  source: 'script' | 'trace';
  turns: ReplayTurn[];
}

/**
 * Loads a replay file: a trace (`.jsonl`, or a file whose first line is a trace event)
 * replays its recorded model responses; anything else is a YAML script. Every problem is
 * reported with its line.
 */
export async function loadReplayScript(file: string, shownAs = file): Promise<ReplayScript> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new UsageError(`${shownAs}: cannot read replay script (${(error as NodeJS.ErrnoException).code ?? error})`);
  }
  if (looksLikeTrace(file, text)) {
    // The trace reader (its event schemas) loads only for a trace: a run on a script, or on
    // a real model, never pays for it before its first request.
    const { turnsFromTrace } = await import('./trace-replay.js');
    return { source: 'trace', turns: turnsFromTrace(text, shownAs) };
  }
  return { source: 'script', turns: (await parseScript(text, shownAs)).turns.map(scriptTurn) };
}

/** Whether a replay file is a trace rather than a YAML script: by its name, or by its first line. */
function looksLikeTrace(file: string, text: string): boolean {
  if (file.endsWith('.jsonl')) return true;
  const first = text.split('\n', 1)[0] ?? '';
  try {
    const value = JSON.parse(first) as unknown;
    return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as { type?: unknown }).type === 'string' && typeof (value as { seq?: unknown }).seq === 'number';
  } catch {
    return false;
  }
}

/** How a replay file is loaded; `memoizeReplayLoads` makes one that loads each file once. */
export type ReplayLoader = (file: string, shownAs?: string) => Promise<ReplayScript>;

/**
 * A loader that reads and checks each file once and hands the same script to every later
 * caller: one run validates its script in preflight and then plays it, and a long script
 * costs real time to parse. Per command, so an edited script is read afresh by the next one.
 */
export function memoizeReplayLoads(load: ReplayLoader = loadReplayScript): ReplayLoader {
  const loaded = new Map<string, Promise<ReplayScript>>();
  return (file, shownAs) => {
    let script = loaded.get(file);
    if (script === undefined) loaded.set(file, (script = load(file, shownAs)));
    return script;
  };
}

/** A script turn as blocks: its text, then its tools with ids stable per turn. */
function scriptTurn(turn: z.infer<typeof ReplayTurn>, index: number): ReplayTurn {
  const content: TurnBlock[] = [];
  if (turn.text) content.push({ type: 'text', text: turn.text });
  (turn.tools ?? []).forEach((tool, i) => {
    const [name, input] = Object.entries(tool)[0] ?? ['', {}];
    content.push({ type: 'tool_use', id: `toolu_replay_${index}_${i}`, name, input: input ?? {} });
  });
  return { content };
}

async function parseScript(text: string, shownAs: string): Promise<z.infer<typeof ReplayScriptFile>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const problems: Problem[] = doc.errors.map((e) => {
    const pos = lineCounter.linePos(e.pos[0]);
    return { file: shownAs, line: pos.line, column: pos.col, field: '', message: e.message.split('\n')[0] ?? 'YAML error' };
  });
  if (problems.length === 0) {
    const parsed = ReplayScriptFile.safeParse(doc.toJS());
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) {
      const node = doc.getIn(issue.path as (string | number)[], true) as { range?: [number, number, number] } | undefined;
      const pos = lineCounter.linePos(node?.range?.[0] ?? 0);
      problems.push({ file: shownAs, line: pos.line, column: pos.col, field: issue.path.join('.'), message: issue.message });
    }
  }
  throw new UsageError(`${shownAs}: invalid replay script`, problems);
}

/**
 * A deterministic, offline model that plays a script of assistant turns. The turn played
 * is the number of assistant turns so far (those a compaction dropped included), so check
 * feedback simply moves to the next turn (a trace's turns are played in call order instead). A recorded turn keeps its stop
 * reason and usage; otherwise usage is estimated as bytes / 4 so token budgets behave as
 * they would live.
 */
export function createReplayModel(id: string, script: ReplayScript): Model {
  let calls = 0;
  // Each turn as JSON, made once: every call hands out a fresh copy parsed from it (two runs
  // replaying the same script share nothing), and its length is the turn's size for the usage
  // estimate, so a step pays for neither a structuredClone nor a stringify of it.
  const turnJson: string[] = [];
  // The request grows by a turn each call; its size is kept up to date, not recomputed.
  const messagesBytes = createJsonSizer();
  const assistantMessages = createRunningSum<ModelRequest['messages'][number]>((message) => (message.role === 'assistant' ? 1 : 0));
  const fixedBytes = new WeakMap<object, number>();
  return {
    id,
    async complete(request: ModelRequest): Promise<ModelTurn> {
      request.signal.throwIfAborted();
      // A compaction drops turns from the conversation, not from the script.
      const index = script.source === 'trace' ? calls++ : (request.compactedTurns ?? 0) + assistantMessages(request.messages);
      const turn = script.turns[index];
      const json = turn === undefined ? JSON.stringify([{ type: 'text', text: `(the replay ${script.source} has no more turns)` }]) : (turnJson[index] ??= JSON.stringify(turn.content));
      const content = JSON.parse(json) as TurnBlock[];
      // As JSON.stringify({ s: system, m: messages, t: tools }).length, with the messages sized once each.
      let toolsBytes = fixedBytes.get(request.tools);
      if (toolsBytes === undefined) fixedBytes.set(request.tools, (toolsBytes = JSON.stringify(request.tools).length));
      const requestBytes = '{"s":,"m":,"t":}'.length + JSON.stringify(request.system).length + messagesBytes(request.messages) + toolsBytes;
      return {
        content,
        stopReason: turn?.stopReason ?? (content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn'),
        usage: turn?.usage ?? {
          inputTokens: Math.ceil(requestBytes / 4),
          outputTokens: Math.ceil(json.length / 4),
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
        model: id,
      };
    },
  };
}
