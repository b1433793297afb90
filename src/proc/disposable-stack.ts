// The standard AsyncDisposableStack where the runtime has it (Node 24), and the same
// few methods where it does not (Node 20 and 22 have the symbols, not the class): a
// run's resources are released in reverse order of acquisition, each release awaited,
// and every failure kept rather than the first one hiding the rest.

export interface ResourceStack extends AsyncDisposable {
  /** Registers `release` to run when the stack is disposed, before those registered earlier. */
  defer(release: () => PromiseLike<void> | void): void;
  /** Registers a value's own disposal and hands the value back. */
  use<T extends AsyncDisposable | Disposable | null | undefined>(value: T): T;
  disposeAsync(): Promise<void>;
  readonly disposed: boolean;
}

interface StackConstructor {
  new (): ResourceStack;
}

class FallbackStack implements ResourceStack {
  #releases: (() => PromiseLike<void> | void)[] = [];
  #disposed = false;

  get disposed(): boolean {
    return this.#disposed;
  }

  defer(release: () => PromiseLike<void> | void): void {
    if (this.#disposed) throw new ReferenceError('the stack is already disposed');
    this.#releases.push(release);
  }

  use<T extends AsyncDisposable | Disposable | null | undefined>(value: T): T {
    if (value === null || value === undefined) return value;
    const asyncDispose = (value as Partial<AsyncDisposable>)[Symbol.asyncDispose];
    const dispose = asyncDispose ?? (value as Partial<Disposable>)[Symbol.dispose];
    if (typeof dispose !== 'function') throw new TypeError('the value is not disposable');
    this.defer(() => dispose.call(value));
    return value;
  }

  async disposeAsync(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    let failure: { error: unknown } | undefined;
    for (const release of this.#releases.reverse()) {
      try {
        await release();
      } catch (error) {
        // As the standard does: a later failure wraps the earlier one, so none is lost.
        failure = { error: failure === undefined ? error : suppressed(error, failure.error) };
      }
    }
    this.#releases = [];
    if (failure !== undefined) throw failure.error;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.disposeAsync();
  }
}

function suppressed(error: unknown, earlier: unknown): Error {
  const wrapped = new Error(`${String(error instanceof Error ? error.message : error)} (after: ${String(earlier instanceof Error ? earlier.message : earlier)})`);
  return Object.assign(wrapped, { error, suppressed: earlier });
}

const native = (globalThis as { AsyncDisposableStack?: StackConstructor }).AsyncDisposableStack;

/** A new stack of resources to release together. */
export function resourceStack(): ResourceStack {
  return native === undefined ? new FallbackStack() : new native();
}
