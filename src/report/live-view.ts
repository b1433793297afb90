import type { ChalkInstance } from 'chalk';
import { addUsage, totalTokens } from '../trace/records.js';
import { ZERO_USAGE, type TokenUsage } from '../trace/records.js';
import type { RunEvent } from '../trace/events.js';
import { formatCount, formatDuration } from './summary.js';
import { makeVisible as visible } from '../text/visible.js';

// A batch in a terminal: one line per running ticket at the bottom of the screen, redrawn
// in place, while finished tickets' summaries scroll above it. Lines are cut to the
// terminal's width, so a line never wraps and the redraw always knows how many to erase.

interface Running {
  id: string;
  startedAt: number;
  step: number;
  lastTool: string;
  usage: TokenUsage;
}

export interface LiveViewOptions {
  out: NodeJS.WriteStream | (NodeJS.WritableStream & { columns?: number });
  c: ChalkInstance;
  now?: () => number;
  /** How often elapsed times tick; 0 turns the ticker off (tests). */
  tickMs?: number;
}

const ERASE_DOWN = '\x1b[J';
const up = (lines: number): string => (lines > 0 ? `\x1b[${lines}F` : '\r');

export class LiveView {
  private readonly running = new Map<string, Running>();
  private drawn = 0;
  private suspended = 0;
  /** What was printed while a prompt had the terminal: shown when it gives it back. */
  private held: { text: string; stream: NodeJS.WritableStream }[] = [];
  private readonly ticker: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(private readonly options: LiveViewOptions) {
    this.now = options.now ?? Date.now;
    const tick = options.tickMs ?? 1000;
    if (tick > 0) {
      this.ticker = setInterval(() => this.redraw(), tick);
      this.ticker.unref();
    }
  }

  started(id: string): void {
    this.running.set(id, { id, startedAt: this.now(), step: 0, lastTool: '', usage: ZERO_USAGE });
    this.redraw();
  }

  event(id: string, event: RunEvent): void {
    const state = this.running.get(id);
    if (!state) return;
    if (event.type === 'model_response') {
      state.step = event.step;
      state.usage = addUsage(state.usage, event.usage);
    } else if (event.type === 'tool_call') state.lastTool = event.tool;
    else if (event.type === 'check') state.lastTool = `check ${event.name}`;
    else return;
    this.redraw();
  }

  finished(id: string): void {
    this.running.delete(id);
    this.redraw();
  }

  /** Writes `text` (whole lines) above the running lines, to this view's stream or another on the same terminal. */
  printAbove(text: string, stream: NodeJS.WritableStream = this.options.out): void {
    const whole = text.endsWith('\n') ? text : `${text}\n`;
    // Never into the middle of a question the person is answering.
    if (this.suspended > 0) {
      this.held.push({ text: whole, stream });
      return;
    }
    this.erase();
    stream.write(whole);
    this.draw();
  }

  /** Takes the running lines off the screen while `during` runs (a prompt owns the terminal then). */
  async hiddenWhile<T>(during: () => Promise<T>): Promise<T> {
    this.erase();
    this.suspended++;
    try {
      return await during();
    } finally {
      this.suspended--;
      if (this.suspended === 0) for (const { text, stream } of this.held.splice(0)) stream.write(text);
      this.draw();
    }
  }

  close(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.erase();
    this.running.clear();
    for (const { text, stream } of this.held.splice(0)) stream.write(text);
  }

  /** The running lines as they would be drawn now (for tests and the redraw). */
  lines(): string[] {
    const { c } = this.options;
    const width = Math.max(20, (this.options.out as { columns?: number }).columns || 100);
    return [...this.running.values()].map((r) => {
      const tool = r.lastTool ? ` · ${visible(r.lastTool)}` : '';
      const line = `${c.cyan('▸')} ${visible(r.id)}  ${c.dim(`step ${r.step}${tool} · ${formatDuration(Math.max(0, this.now() - r.startedAt))} · ${formatCount(totalTokens(r.usage))} tokens`)}`;
      return cutToWidth(line, width - 1);
    });
  }

  private redraw(): void {
    if (this.suspended > 0) return;
    this.erase();
    this.draw();
  }

  private erase(): void {
    if (this.drawn === 0 || this.suspended > 0) return;
    this.options.out.write(`${up(this.drawn)}${ERASE_DOWN}`);
    this.drawn = 0;
  }

  private draw(): void {
    if (this.suspended > 0 || this.drawn > 0) return;
    const lines = this.lines();
    if (lines.length === 0) return;
    this.options.out.write(`${lines.join('\n')}\n`);
    this.drawn = lines.length;
  }
}

// Cuts by visible characters, keeping colour escapes whole and closing them at the cut.
function cutToWidth(line: string, width: number): string {
  let shown = 0;
  let out = '';
  let coloured = false;
  for (const part of line.split(/(\x1b\[[0-9;]*m)/)) {
    if (part.startsWith('\x1b[')) {
      out += part;
      coloured = true;
      continue;
    }
    const chars = Array.from(part);
    if (shown + chars.length <= width) {
      out += part;
      shown += chars.length;
      continue;
    }
    out += `${chars.slice(0, Math.max(0, width - shown - 1)).join('')}…${coloured ? '\x1b[0m' : ''}`;
    return out;
  }
  return out;
}
