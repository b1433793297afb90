// The Anthropic Messages API as a Model. The SDK does the transport: it reads the key
// (ANTHROPIC_API_KEY / ANTHROPIC_AUTH_TOKEN) and ANTHROPIC_BASE_URL, retries, times out
// and types its errors. This file only shapes the request (prompt caching), maps the
// final message to a ModelTurn, and turns the SDK's final failure into ModelApiError.
import { BaseAnthropic, type ClientOptions } from '@anthropic-ai/sdk/client';
import {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  AuthenticationError,
  NotFoundError,
  OverloadedError,
  PermissionDeniedError,
  RateLimitError,
} from '@anthropic-ai/sdk/error';
import { Messages } from '@anthropic-ai/sdk/resources/messages/messages';
import type {
  CacheControlEphemeral,
  ContentBlockParam,
  Message,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages/messages.js';
import { ConversationWire, createHttpFetch } from './anthropic-transport.js';
import { PerMessage } from './per-message.js';
import { ModelApiError, type Model, type ModelRequest, type ModelTurn, type ToolSpec } from './model.js';
import { type TurnBlock } from '../trace/records.js';

export interface AnthropicModelOptions {
  /** The model id the ticket named, e.g. `claude-sonnet-4-5`. */
  model: string;
  /** Retries the SDK makes itself on 408/409/429/5xx and connection errors (SDK default: 2). */
  maxRetries?: number;
  /** Per-attempt timeout the SDK enforces (SDK default: 10 minutes). */
  timeoutMs?: number;
}

export function createAnthropicModel(options: AnthropicModelOptions): Model {
  // No apiKey or baseURL passed on purpose: the SDK's own defaults read the environment,
  // so a real key with the default URL works unchanged and no secret passes through here.
  // The SDK's log lines go to stderr: stdout carries only the summary or the JSON report.
  const toStderr = (...args: unknown[]) => console.error(...args);
  const logger = { error: toStderr, warn: toStderr, info: toStderr, debug: toStderr };
  // Without an OpenTelemetry tracer provider in the process the SDK's spans record nothing,
  // yet each still walks the whole conversation once more per request (its headers): off
  // unless a provider is registered (e.g. by instrumentation loaded with --require).
  const tracing = openTelemetryRegistered();
  const openTelemetry = tracing ? {} : { openTelemetry: false as const };
  // The conversation goes to the socket a message at a time, each serialised once (anthropic-transport.ts).
  const wire = new ConversationWire();
  // Each message without the caller's cache markers, kept from one request to the next.
  const unmarking = new PerMessage<MessageParam, MessageParam>(unmarkedMessage);
  const client = new MessagesClient({ maxRetries: options.maxRetries, timeout: options.timeoutMs, logger, fetch: createHttpFetch(wire), ...openTelemetry });
  const context: ErrorContext = { model: options.model, maxRetries: client.maxRetries };

  return {
    id: options.model,
    async complete(request: ModelRequest): Promise<ModelTurn> {
      let message: Message;
      let stall: StallWatch | undefined;
      const params = buildParams(options.model, request, unmarking);
      // An SDK that records what it sends (tracing spans, its debug log) sees the messages.
      const conversation = wire.mark(params.messages, { visible: tracing || client.logLevel === 'debug', ...(request.onSent ? { sent: request.onSent } : {}) });
      try {
        const stream = client.messages.stream({ ...params, messages: conversation.messages }, { signal: request.signal });
        stall = watchForStall(stream, client.timeout);
        message = await stream.finalMessage();
      } catch (error) {
        if (stall?.fired) throw new ModelApiError(stallMessage(client.timeout), { cause: error });
        throw toModelError(error, request.signal, context);
      } finally {
        stall?.stop();
        conversation.release();
      }
      return toTurn(message);
    },
  };
}

/**
 * The SDK's client with only the resource corral calls. The package's default export,
 * `Anthropic`, is this same base client with every resource attached (models, files,
 * skills, beta, ...): three quarters of the SDK's code, which a run would load and
 * compile before its first request and never call. Figure: SDK start to first request.
 */
class MessagesClient extends BaseAnthropic {
  readonly messages: Messages;
  constructor(options: ClientOptions) {
    super(options);
    this.messages = new Messages(this);
  }
}

/** Whether OpenTelemetry's API (major version 1) has a global tracer provider registered in this process. */
function openTelemetryRegistered(): boolean {
  const registry = (globalThis as Record<symbol, { trace?: unknown } | undefined>)[Symbol.for('opentelemetry.js.api.1')];
  return registry?.trace !== undefined;
}

/**
 * The SDK's timeout ends when the response headers arrive; a stream that then goes quiet
 * would hang until the run's minute budget. The same timeout, counted from the headers
 * and from each event after them, ends it (the API's pings are not events here, so a
 * reply that only pings for the whole timeout counts as stalled).
 */
interface StallWatch {
  /** Whether it gave up on the stream (and aborted it). */
  readonly fired: boolean;
  stop(): void;
}

function watchForStall(stream: ReturnType<Messages['stream']>, timeoutMs: number): StallWatch {
  let fired = false;
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      fired = true;
      stream.abort();
    }, timeoutMs);
  };
  stream.on('connect', arm);
  stream.on('streamEvent', arm);
  return {
    get fired() {
      return fired;
    },
    stop: () => clearTimeout(timer),
  };
}

function stallMessage(timeoutMs: number): string {
  const seconds = Math.round(timeoutMs / 100) / 10;
  return `Anthropic API response timed out: its stream sent nothing for ${seconds} s; try again, or allow a longer model timeout (model_api.timeout_seconds)`;
}

// ---- request: prompt caching on the stable prefix -------------------------------------

/** A fresh object each time, so no request shares (or could mutate) another's marker. */
function ephemeral(): CacheControlEphemeral {
  return { type: 'ephemeral' };
}

/**
 * Three breakpoints, under the API's limit of four: the system prompt and the tool specs
 * never change during a run, and the last user block moves forward each turn so the
 * whole conversation so far is read from the cache on the next turn.
 */
function buildParams(model: string, request: ModelRequest, unmarking: PerMessage<MessageParam, MessageParam>): MessageCreateParamsBase {
  const system: TextBlockParam[] | undefined = request.system
    ? [{ type: 'text', text: request.system, cache_control: ephemeral() }]
    : undefined; // the API rejects an empty text block
  return {
    model,
    max_tokens: request.maxTokens,
    ...(system ? { system } : {}),
    ...(request.tools.length > 0 ? { tools: toolsWithBreakpoint(request.tools) } : {}),
    messages: messagesWithBreakpoint(request.messages, unmarking),
  };
}

function toolsWithBreakpoint(tools: ToolSpec[]): Tool[] {
  const last = tools.length - 1;
  return tools.map((tool, index) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.input_schema,
    ...(index === last ? { cache_control: ephemeral() } : {}),
  }));
}

/**
 * Each message without the markers the caller left in, by message: a conversation is sent
 * again every turn and its messages are not changed once in it (a message is replaced, not
 * edited, as agent/json-size.ts also assumes), so each is looked at once, not once a turn.
 * A message whose content array was swapped is looked at again.
 */
const unmarkedMessages = new WeakMap<MessageParam, { content: MessageParam['content']; message: MessageParam }>();

function unmarkedMessage(message: MessageParam): MessageParam {
  if (typeof message.content === 'string') return message;
  const known = unmarkedMessages.get(message);
  if (known !== undefined && known.content === message.content) return known.message;
  const content = message.content.map(unmarked);
  const result = content.some((block, i) => block !== message.content[i]) ? ({ ...message, content } as MessageParam) : message;
  unmarkedMessages.set(message, { content: message.content, message: result });
  return result;
}

/** A copy of the messages with one breakpoint, on the last user message's last block. The caller's array is untouched. */
function messagesWithBreakpoint(messages: MessageParam[], unmarking: PerMessage<MessageParam, MessageParam>): MessageParam[] {
  // Markers the caller left in would count against the limit of four: ours are the only ones.
  const copy = unmarking.over(messages).results.slice();

  const lastUser = findLastIndex(copy, (message) => message.role === 'user');
  const target = copy[lastUser];
  if (!target) return copy;

  if (typeof target.content === 'string') {
    if (target.content) {
      copy[lastUser] = { ...target, content: [{ type: 'text', text: target.content, cache_control: ephemeral() }] } as MessageParam;
    }
    return copy;
  }
  const blocks = target.content as ContentBlockParam[];
  // Thinking blocks can't carry a marker; any other user block can.
  const at = findLastIndex(blocks, (block) => block.type !== 'thinking' && block.type !== 'redacted_thinking');
  if (at >= 0) {
    const marked = [...blocks];
    marked[at] = { ...blocks[at], cache_control: ephemeral() } as ContentBlockParam;
    copy[lastUser] = { ...target, content: marked } as MessageParam;
  }
  return copy;
}

/** The block without cache_control, also inside a tool_result's content; the same object when there was none. */
function unmarked<T>(block: T): T {
  if (typeof block !== 'object' || block === null) return block;
  const record = block as Record<string, unknown>;
  const nested = Array.isArray(record['content']) ? (record['content'] as unknown[]) : undefined;
  const nestedCopy = nested?.map(unmarked);
  const nestedChanged = nested !== undefined && nestedCopy!.some((item, i) => item !== nested[i]);
  if (!('cache_control' in record) && !nestedChanged) return block;
  const { cache_control: _dropped, ...rest } = record;
  if (nestedChanged) rest['content'] = nestedCopy;
  return rest as T;
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i] as T)) return i;
  return -1;
}

// ---- response -------------------------------------------------------------------------

function toTurn(message: Message): ModelTurn {
  if (message.stop_reason === null) {
    // Only a stream cut off before message_delta leaves this null: the turn is incomplete.
    throw new ModelApiError(`Anthropic API stream ended without a stop_reason (message ${message.id})`);
  }
  const content: TurnBlock[] = [];
  for (const block of message.content) {
    if (block.type === 'text') content.push({ type: 'text', text: block.text });
    else if (block.type === 'tool_use') content.push({ type: 'tool_use', id: block.id, name: block.name, input: block.input });
    // Other blocks (thinking, server tools) are not requested and have no meaning to the loop.
  }
  const usage = message.usage;
  return {
    content,
    stopReason: message.stop_reason,
    usage: {
      inputTokens: usage.input_tokens ?? 0,
      outputTokens: usage.output_tokens ?? 0,
      cacheReadTokens: usage.cache_read_input_tokens ?? 0,
      cacheWriteTokens: usage.cache_creation_input_tokens ?? 0,
    },
    model: message.model,
  };
}

// ---- errors: the SDK has already retried; say what failed and what to do --------------

interface ErrorContext {
  model: string;
  maxRetries: number;
}

/** What complete() throws for a failure: the caller's abort as is, an SDK failure as ModelApiError, a bug as is. */
function toModelError(error: unknown, signal: AbortSignal, context: ErrorContext): unknown {
  // An interrupt or a deadline is the caller's doing, and it has to tell that apart from an API failure.
  if (error instanceof APIUserAbortError || isAbortError(error) || signal.aborted) return error;
  if (error instanceof AnthropicError) return new ModelApiError(describe(error, context), { cause: error });
  return error;
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

function describe(error: AnthropicError, context: ErrorContext): string {
  if (error instanceof APIConnectionTimeoutError) {
    return `Anthropic API request timed out${afterRetries(context)}; try again, or allow a longer model timeout`;
  }
  if (error instanceof APIConnectionError) {
    // The cause's code (ECONNREFUSED, ENOTFOUND, ...) says enough; its message may name the host.
    const code = causeCode(error);
    return `could not reach the Anthropic API${code ? ` (${code})` : ''}${afterRetries(context)}; check the network, and ANTHROPIC_BASE_URL if it is set`;
  }
  if (error instanceof APIError) {
    const status = error.status === undefined ? 'error in the response stream' : String(error.status);
    const type = error.type ? ` ${error.type}` : '';
    const detail = error.apiMessage ?? (error.status === undefined ? error.message : '');
    const requestId = error.requestID ? ` (request-id ${error.requestID})` : '';
    const retried = wasRetried(error) ? afterRetries(context) : '';
    const hint = hintFor(error, context);
    return `Anthropic API ${status}${type}${detail ? `: ${detail}` : ''}${requestId}${retried}${hint ? `; ${hint}` : ''}`;
  }
  if (/authentication/i.test(error.message)) {
    return `Anthropic API: ${error.message}; set ANTHROPIC_API_KEY`;
  }
  // The rest fail after a response started, where the SDK's retries no longer apply.
  const broken = brokenStream(error);
  if (broken) return `${broken}; the SDK retries only until a response starts: try again`;
  return `Anthropic API: ${error.message}`;
}

/** What went wrong when a started response broke (the SDK wraps these causes in a bare AnthropicError), or null. */
function brokenStream(error: AnthropicError): string | null {
  if (error.cause instanceof SyntaxError) return `the Anthropic API sent a malformed response stream (${error.cause.message})`;
  const code = causeCode(error);
  if (code) return `the Anthropic API response stream broke off (${code})`;
  if (/^(stream|request) ended without/.test(error.message)) return `the Anthropic API response stream ended early (${error.message})`;
  return null;
}

function hintFor(error: APIError, context: ErrorContext): string {
  if (error instanceof AuthenticationError) return 'check ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN): the API rejected it';
  if (error instanceof PermissionDeniedError) return `check that the key may use model "${context.model}"`;
  if (error instanceof NotFoundError) return `check the model id "${context.model}" (and ANTHROPIC_BASE_URL if it is set)`;
  if (error instanceof RateLimitError) return 'rate limited: wait, or run fewer tickets at once';
  if (error instanceof OverloadedError) return 'the API is overloaded: try again later';
  if (error.status !== undefined && error.status >= 500) return 'the API failed: try again later';
  return '';
}

/** Whether the SDK's retry policy applied to this status (mirrors its shouldRetry). */
function wasRetried(error: APIError): boolean {
  if (error.headers?.get('x-should-retry') === 'false') return false;
  const status = error.status;
  return status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500);
}

function afterRetries(context: ErrorContext): string {
  const n = context.maxRetries;
  return n > 0 ? `, after ${n} ${n === 1 ? 'retry' : 'retries'}` : '';
}

function causeCode(error: Error): string | undefined {
  for (let cause: unknown = error.cause, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth++) {
    const code = (cause as Error & { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
