import { Chalk } from 'chalk';
import { describe, expect, it } from 'vitest';
import { ZERO_USAGE } from '../../src/trace/records.js';
import { LiveView } from '../../src/report/live-view.js';

function terminal(columns = 80) {
  let written = '';
  return { stream: { columns, write: (text: string) => ((written += text), true) } as unknown as NodeJS.WriteStream, written: () => written };
}

describe('the live view', () => {
  it('shows one line per running ticket with step, last tool, elapsed time and tokens', () => {
    let now = 1_000;
    const tty = terminal();
    const view = new LiveView({ out: tty.stream, c: new Chalk({ level: 0 }), now: () => now, tickMs: 0 });
    view.started('fix-fees');
    view.started('add-limit');
    view.event('fix-fees', { type: 'model_response', step: 3, stopReason: 'tool_use', usage: { ...ZERO_USAGE, inputTokens: 1200, outputTokens: 34 }, content: [], durationMs: 5 });
    view.event('fix-fees', { type: 'tool_call', step: 3, id: 'x', tool: 'Edit', input: {} });
    now = 13_500;
    expect(view.lines()).toEqual(['▸ fix-fees  step 3 · Edit · 12.5s · 1,234 tokens', '▸ add-limit  step 0 · 12.5s · 0 tokens']);
    view.finished('fix-fees');
    expect(view.lines()).toEqual(['▸ add-limit  step 0 · 12.5s · 0 tokens']);
    view.close();
  });

  it('erases exactly the lines it drew before printing above them, and never wraps a line', () => {
    const tty = terminal(30);
    const view = new LiveView({ out: tty.stream, c: new Chalk({ level: 1 }), tickMs: 0 });
    view.started('a-ticket-with-a-rather-long-name');
    view.started('b');
    view.printAbove('summary of c');
    const output = tty.written();
    // Two lines drawn, then: up two lines, erase down, the text, the two lines again.
    expect(output).toContain('\x1b[2F\x1b[Jsummary of c\n');
    for (const line of view.lines()) expect(line.replace(/\x1b\[[0-9;]*m/g, '').length).toBeLessThanOrEqual(29);
    view.close();
  });

  it('stays off the screen while a prompt has the terminal', async () => {
    const tty = terminal();
    const view = new LiveView({ out: tty.stream, c: new Chalk({ level: 0 }), now: () => 0, tickMs: 0 });
    view.started('t1');
    let during = '';
    await view.hiddenWhile(async () => {
      const before = tty.written().length;
      view.event('t1', { type: 'tool_call', step: 1, id: 'x', tool: 'Bash', input: {} });
      during = tty.written().slice(before);
    });
    expect(during).toBe('');
    expect(tty.written().endsWith('▸ t1  step 0 · Bash · 0ms · 0 tokens\n')).toBe(true);
    view.close();
  });
});
