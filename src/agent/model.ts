import type { TokenUsage, TurnBlock } from '../trace/records.js';
import type { MessageParam } from '@anthropic-ai/sdk/resources/messages/messages.js';

export type { MessageParam };

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  input_schema: { type: 'object'; [key: string]: unknown };
}

export interface ModelRequest {
  system: string;
  messages: MessageParam[];
  tools: ToolSpec[];
  maxTokens: number;
  signal: AbortSignal;
  /**
   * Assistant turns of this conversation that a compaction replaced by a summary: they are
   * no longer in `messages`, but they were played (a replay script counts them).
   */
  compactedTurns?: number;
  /**
   * Called once the request is on its way (its last bytes handed to the operating system).
   * A model that sends nothing need not call it: the loop calls it when the turn comes.
   */
  onSent?: () => void;
}



/** One assistant turn. stopReason is the API's own string (end_turn, tool_use, max_tokens, refusal, ...). */
export interface ModelTurn {
  content: TurnBlock[];
  stopReason: string;
  usage: TokenUsage;
  /** The model that answered, as the API reported it. */
  model: string;
}

export interface Model {
  /** What the ticket named: a model id, or `replay:<file>`. */
  readonly id: string;
  complete(request: ModelRequest): Promise<ModelTurn>;
}

/** The model API failed for good (after the SDK's own retries): exit 6. */
export class ModelApiError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelApiError';
  }
}
