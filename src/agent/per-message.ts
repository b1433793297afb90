/**
 * Something worked out for each message of a conversation that is sent again every turn,
 * kept from one request to the next. A turn appends messages; a context edit swaps an old
 * message's content array (messages are replaced or their content swapped, never edited
 * in place). So the results are kept up to the first message that is not the object seen
 * there last time, or whose content is not, and only the rest is worked out again: a
 * request costs what it added, not the whole conversation, which at a thousand steps made
 * each request walk thousands of messages.
 */
export class PerMessage<M extends object, R> {
  readonly #derive: (message: M, index: number) => R;
  readonly #size: (result: R, message: M, index: number) => number;
  readonly #seen = new SeenMessages<M>();
  #results: R[] = [];
  /** #sizes[i]: the size of results 0..i together. */
  #sizes: number[] = [];

  /** `derive` works out one message's result (it may depend on the index); `size` measures one, for `size` below. */
  constructor(derive: (message: M, index: number) => R, size: (result: R, message: M, index: number) => number = () => 0) {
    this.#derive = derive;
    this.#size = size;
  }

  /** The results for `messages`, in order (the array is this object's: copy it to change it), and their total size. */
  over(messages: readonly M[]): { results: readonly R[]; size: number } {
    const same = this.#seen.update(messages);
    this.#results.length = this.#sizes.length = same;
    for (let index = same; index < messages.length; index++) {
      const message = messages[index]!;
      const result = this.#derive(message, index);
      this.#results.push(result);
      this.#sizes.push((index > 0 ? this.#sizes[index - 1]! : 0) + this.#size(result, message, index));
    }
    return { results: this.#results, size: this.#sizes.at(-1) ?? 0 };
  }
}

/**
 * How many leading messages of a conversation are the very ones seen at the last call:
 * the same object at the same place, with the same content array. The rule PerMessage
 * keeps its results by, for a keeper of its own (the transport's kept bytes).
 */
export class SeenMessages<M extends object> {
  #messages: M[] = [];
  #contents: unknown[] = [];

  /** The count of messages unchanged since the last call; `messages` is what is seen from now on. */
  update(messages: readonly M[]): number {
    // Locals, not fields, in the loop: it runs over the whole conversation every request,
    // on V8's baseline tiers only (bin/corral.cjs), where each field read costs.
    const seen = this.#messages;
    const contents = this.#contents;
    const known = Math.min(messages.length, seen.length);
    let same = 0;
    while (same < known && messages[same] === seen[same] && contentOf(messages[same]!) === contents[same]) same++;
    seen.length = contents.length = same;
    for (let index = same; index < messages.length; index++) {
      seen.push(messages[index]!);
      contents.push(contentOf(messages[index]!));
    }
    return same;
  }
}

function contentOf(message: object): unknown {
  return (message as { content?: unknown }).content;
}
