import { createInterface, type Interface } from 'node:readline';

// The person's side of an ask: one terminal shared by every run of a command, one
// question at a time, answered line by line.

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

  // Read from the start, so a line typed before the first prompt is dropped like any
  // other type-ahead rather than waiting in the terminal to answer it.
  open();
  handle.unref?.();

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

export function untilAborted(promise: Promise<unknown>, signal: AbortSignal): Promise<void> {
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
