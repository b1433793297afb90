import type { EmitEvent } from '../trace/events.js';
import type { TokenUsage } from '../trace/records.js';
import { clearOldToolResults, compactConversation } from './context-edit.js';
import { ContextLedger } from './context-summary.js';
import { DEFAULT_KEEP_TOOL_RESULTS, type TicketContext } from '../ticket/types.js';
import { contextThresholds, contextWindowOf, promptTokens, tokensOfBytes, type ContextThresholds } from './context-window.js';
import { createJsonSizer } from './json-size.js';
import type { MessageParam, ToolSpec } from './model.js';

/** How a run keeps its conversation within the window: the ticket's `context`, all optional. */
export type ContextSettings = TicketContext;

export interface ContextKeeperOptions {
  modelId: string;
  system: string;
  tools: readonly ToolSpec[];
  maxTokens: number;
  task: string;
  settings?: ContextSettings;
  emit: EmitEvent;
}

/** Assistant turns kept after a compaction, at most: enough for the model to see where it was. */
const KEEP_TURNS = 6;

/**
 * Keeps one run's conversation within its model's context window. Before each request it
 * estimates the prompt's size: the tokens the API reported for the last request, plus a
 * quarter token a byte for what was added since (never less than a quarter token a byte of
 * the whole prompt, so a stand-in or proxy that reports no usage cannot hide a growing
 * conversation). Past the threshold it clears old tool results; if that is not enough, it
 * compacts older turns into one summary from its ledger. Each edit is a trace event.
 *
 * The loop hands its messages over and takes back what fit() returns: the keeper holds no
 * other copy, so what an edit drops is garbage once the loop lets the old array go.
 */
export class ContextKeeper {
  readonly ledger: ContextLedger;
  readonly thresholds: ContextThresholds;
  private readonly keep: number;
  private readonly emit: EmitEvent;
  /** The system prompt and tools as the byte estimate counts them: they are in every request. */
  private readonly fixedTokens: number;
  private readonly sizer = createJsonSizer();
  /** What the API said the last request's prompt was, and that request's messages in bytes. */
  private reported: { tokens: number; bytes: number } | null = null;
  private dropped = 0;

  constructor(options: ContextKeeperOptions) {
    this.ledger = new ContextLedger(options.task);
    this.thresholds = contextThresholds(contextWindowOf(options.modelId, options.settings?.window), options.maxTokens);
    this.keep = options.settings?.keepToolResults ?? DEFAULT_KEEP_TOOL_RESULTS;
    this.emit = options.emit;
    this.fixedTokens = tokensOfBytes(options.system.length + JSON.stringify(options.tools).length);
  }

  /** Assistant turns no longer in the conversation, all compactions together. */
  get compactedTurns(): number {
    return this.dropped;
  }

  /** The conversation's size as JSON, counted incrementally while it only grows. */
  bytes(messages: readonly MessageParam[]): number {
    return this.sizer(messages);
  }

  /** The prompt's estimated tokens for messages of this size. */
  estimate(bytes: number): number {
    const byBytes = this.fixedTokens + tokensOfBytes(bytes);
    if (this.reported === null) return byBytes;
    return Math.max(byBytes, this.reported.tokens + tokensOfBytes(bytes - this.reported.bytes));
  }

  /** The API's answer to a request whose messages were `requestBytes` long. */
  answered(usage: TokenUsage, requestBytes: number): void {
    const tokens = promptTokens(usage);
    // A turn that reports nothing (a stub, a proxy) says nothing about the prompt.
    this.reported = tokens > 0 ? { tokens, bytes: requestBytes } : null;
  }

  /** The conversation to send for `step`: the one given while it fits, else an edited one. */
  fit(messages: MessageParam[], step: number): MessageParam[] {
    const { editAt, editTo } = this.thresholds;
    let current = messages;
    let bytes = this.bytes(current);
    let tokens = this.estimate(bytes);
    if (tokens <= editAt) return current;

    const cleared = clearOldToolResults(current, this.keep);
    if (cleared.results > 0) {
      current = cleared.messages;
      const after = this.bytes(current);
      const tokensAfter = this.estimate(after);
      this.emit({ type: 'context_cleared', step, results: cleared.results, bytesBefore: bytes, bytesAfter: after, tokensBefore: tokens, tokensAfter, window: this.thresholds.window });
      bytes = after;
      tokens = tokensAfter;
    }
    if (tokens <= editTo) return current;

    // What is not the messages (the system prompt, the tools) stays; the summary and the
    // newest turns share the rest of the target.
    const overhead = tokens - tokensOfBytes(bytes);
    const summarySize = this.ledger.summary(this.dropped + 1_000_000).length + 64;
    const keepBytes = Math.max(0, (editTo - overhead) * 4 - summarySize);
    const compacted = compactConversation(current, { summary: (turns) => this.ledger.summary(this.dropped + turns), keepBytes, keepTurns: KEEP_TURNS });
    if (compacted === null) return current;
    const after = this.bytes(compacted.messages);
    // A summary longer than the few turns it would replace makes nothing smaller.
    if (after >= bytes) return current;
    this.dropped += compacted.turns;
    const summary = compacted.messages[0]!.content as string;
    this.emit({ type: 'context_compacted', step, turns: compacted.turns, bytesBefore: bytes, bytesAfter: after, tokensBefore: tokens, tokensAfter: this.estimate(after), summary });
    return compacted.messages;
  }
}
