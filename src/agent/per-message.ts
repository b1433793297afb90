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
  #messages: M[] = [];
  #contents: unknown[] = [];
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
    // Locals, not fields, in the loop: it runs over the whole conversation every request,
    // on V8's baseline tiers only (bin/corral.cjs), where each field read costs.
    const seen = this.#messages;
    const contents = this.#contents;
    const known = Math.min(messages.length, seen.length);
    let same = 0;
    while (same < known && messages[same] === seen[same] && (messages[same] as { content?: unknown }).content === contents[same]) same++;
    seen.length = contents.length = this.#results.length = this.#sizes.length = same;
    for (let index = same; index < messages.length; index++) {
      const message = messages[index]!;
      const result = this.#derive(message, index);
      this.#messages.push(message);
      this.#contents.push(contentOf(message));
      this.#results.push(result);
      this.#sizes.push((index > 0 ? this.#sizes[index - 1]! : 0) + this.#size(result, message, index));
    }
    return { results: this.#results, size: this.#sizes.at(-1) ?? 0 };
  }
}

function contentOf(message: object): unknown {
  return (message as { content?: unknown }).content;
}
