import type { LiveView } from './live-view.js';

// The process's two streams, shared by every reporter of a set. While a live view is
// drawn at the bottom of the terminal, whatever any reporter prints must go above it, or
// the next redraw erases it; and a prompt must have the terminal to itself.

export type OutStream = NodeJS.WritableStream & { isTTY?: boolean };

export class Screen {
  private view: LiveView | undefined;

  constructor(
    readonly stdout: OutStream,
    readonly stderr: OutStream,
  ) {}

  /** From now until `undraw`, `view` owns the bottom of stderr's terminal. */
  draw(view: LiveView): void {
    this.view = view;
  }

  undraw(view: LiveView): void {
    if (this.view === view) this.view = undefined;
  }

  /** Results on stdout: above the view when stdout is the same terminal. */
  out(text: string): void {
    if (this.view && this.stdout.isTTY) this.view.printAbove(text, this.stdout);
    else this.stdout.write(text);
  }

  /** One line of progress on stderr. */
  err(line: string): void {
    if (this.view) this.view.printAbove(line);
    else this.stderr.write(`${line}\n`);
  }

  /** A line for the person (e.g. that a signal arrived), whichever reporters there are. */
  notice(line: string): void {
    // After a ^C echoed at a terminal, start on a line of its own.
    if (!this.view && this.stderr.isTTY) this.stderr.write('\n');
    this.err(line);
  }

  /** Runs a prompt with the terminal to itself. */
  prompting<T>(ask: () => Promise<T>): Promise<T> {
    return this.view ? this.view.hiddenWhile(ask) : ask();
  }
}
