import type { MessageParam } from './model.js';

// The two ways corral makes room in a conversation, as pure functions of the messages:
// clearing old tool results (the API's clear_tool_uses_20250919 edit, done before the
// request so the request itself shrinks), and compacting older turns into one summary
// message. Both return a new array of messages and leave the one given untouched, so
// whatever still holds the old conversation sees it whole, and whatever sizes it
// incrementally (json-size.ts) knows to count it afresh. Neither ever splits a
// tool_use from its tool_result, and both are idempotent.

/** How every cleared result begins, so a cleared one is never cleared (or counted) again. */
export const CLEARED_MARK = '[corral cleared this result';

/** What replaces a tool result: what it was, and that the call can be made again. */
export function clearedResultText(tool: string, bytes: number): string {
  return `${CLEARED_MARK} to keep the conversation within the context window: it was ${bytes} bytes of ${tool} output. Make the call again if you need it.]`;
}

export interface ClearedConversation {
  messages: MessageParam[];
  /** Results cleared by this edit. */
  results: number;
}

type Block = Exclude<MessageParam['content'], string>[number];
type ToolResultBlock = Extract<Block, { type: 'tool_result' }>;

/**
 * Replaces the content of every tool result older than the newest `keep` by a short
 * placeholder, keeping the block and its `tool_use_id` (the API requires each tool_use to
 * be answered). Results in the last message, which the model has not seen yet, always stay,
 * as do results no longer than their placeholder. The same messages come back when there
 * is nothing to clear.
 */
export function clearOldToolResults(messages: readonly MessageParam[], keep: number): ClearedConversation {
  const toolNames = new Map<string, string>();
  const seen: { message: number; block: number }[] = [];
  // The last message, when it carries results, is the one about to be sent: unseen.
  const seenUpTo = messages.at(-1)?.role === 'user' ? messages.length - 1 : messages.length;
  messages.forEach((message, m) => {
    if (typeof message.content === 'string') return;
    message.content.forEach((block, b) => {
      if (block.type === 'tool_use') toolNames.set(block.id, block.name);
      else if (block.type === 'tool_result' && m < seenUpTo) seen.push({ message: m, block: b });
    });
  });
  const old = seen.slice(0, Math.max(0, seen.length - Math.max(0, keep)));
  const changed = new Map<number, Block[]>();
  let results = 0;
  for (const at of old) {
    const message = messages[at.message]!;
    const block = (message.content as Block[])[at.block] as ToolResultBlock;
    const text = resultText(block);
    if (text.startsWith(CLEARED_MARK)) continue;
    const bytes = Buffer.byteLength(text);
    const replacement = clearedResultText(toolNames.get(block.tool_use_id) ?? 'tool', bytes);
    if (bytes <= Buffer.byteLength(replacement)) continue;
    let blocks = changed.get(at.message);
    if (blocks === undefined) changed.set(at.message, (blocks = [...(message.content as Block[])]));
    const { cache_control: _marker, ...rest } = block;
    blocks[at.block] = { ...rest, content: replacement };
    results += 1;
  }
  if (results === 0) return { messages: messages as MessageParam[], results: 0 };
  return { messages: messages.map((message, m) => (changed.has(m) ? ({ ...message, content: changed.get(m)! } as MessageParam) : message)), results };
}

function resultText(block: ToolResultBlock): string {
  if (block.content === undefined) return '';
  if (typeof block.content === 'string') return block.content;
  return block.content.map((part) => (part.type === 'text' ? part.text : JSON.stringify(part))).join('\n');
}

export interface CompactOptions {
  /** The one user message that stands for the turns dropped, given how many this edit drops. */
  summary: (turns: number) => string;
  /** What the turns kept may take, in bytes of JSON. The newest turn is kept whatever its size. */
  keepBytes: number;
  /** At most this many assistant turns are kept. */
  keepTurns: number;
}

export interface CompactedConversation {
  messages: MessageParam[];
  /** Assistant turns dropped by this edit. */
  turns: number;
}

/**
 * The conversation as one summary message followed by its newest turns: as many whole
 * turns (an assistant message and all that follows it) as fit `keepBytes`, at least one.
 * The kept part starts at an assistant message, so the conversation still starts with a
 * user message, alternates, and has every tool_result right after its tool_use. Null when
 * no turn can be dropped (the conversation is one turn long).
 */
export function compactConversation(messages: readonly MessageParam[], options: CompactOptions): CompactedConversation | null {
  let cut = -1;
  let keptBytes = 0;
  let keptTurns = 0;
  let pendingBytes = 0;
  for (let m = messages.length - 1; m >= 1; m--) {
    const message = messages[m]!;
    pendingBytes += JSON.stringify(message).length + 1;
    if (message.role !== 'assistant') continue;
    // A whole turn: this assistant message and what follows it, up to the last turn kept.
    if (cut !== -1 && (keptTurns >= options.keepTurns || keptBytes + pendingBytes > options.keepBytes)) break;
    cut = m;
    keptBytes += pendingBytes;
    keptTurns += 1;
    pendingBytes = 0;
  }
  // The first message is the task (or an earlier summary): something after it must go.
  if (cut <= 1) return null;
  let turns = 0;
  for (let m = 0; m < cut; m++) if (messages[m]!.role === 'assistant') turns += 1;
  return { messages: [{ role: 'user', content: options.summary(turns) }, ...messages.slice(cut)], turns };
}

/**
 * Whether a conversation is one the API accepts: it starts with a user message, no two
 * user messages follow each other, and every tool_result answers a tool_use of the
 * assistant message just before it (each tool_use answered in the next message).
 * A description of the first problem, or null.
 */
export function conversationProblem(messages: readonly MessageParam[]): string | null {
  if (messages[0]?.role !== 'user') return 'the conversation does not start with a user message';
  for (let m = 0; m < messages.length; m++) {
    const message = messages[m]!;
    const blocks = typeof message.content === 'string' ? [] : message.content;
    if (message.role === 'user') {
      if (m > 0 && messages[m - 1]!.role === 'user') return `messages ${m - 1} and ${m} are both from the user`;
      const asked = new Set(toolUseIds(messages[m - 1]));
      for (const block of blocks) {
        if (block.type === 'tool_result' && !asked.has(block.tool_use_id)) return `message ${m} answers ${block.tool_use_id}, which the message before it did not call`;
      }
    } else {
      const next = messages[m + 1];
      if (next === undefined) continue;
      const answered = new Set(typeof next.content === 'string' ? [] : next.content.flatMap((block) => (block.type === 'tool_result' ? [block.tool_use_id] : [])));
      for (const id of toolUseIds(message)) if (!answered.has(id)) return `the call ${id} of message ${m} is not answered by the next message`;
    }
  }
  return null;
}

function toolUseIds(message: MessageParam | undefined): string[] {
  if (message === undefined || typeof message.content === 'string') return [];
  return message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : []));
}
