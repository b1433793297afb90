import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { answerPrompts, runInPty, shellQuote } from './pty.js';

const ENV = { PATH: process.env.PATH, HOME: process.env.HOME, LANG: 'C.UTF-8' };

describe('runInPty', () => {
  it('runs the command on a terminal and types the answers', async () => {
    const run = await runInPty(['bash', '-c', 'read -p "Allow? " a; [ -t 0 ] && echo "tty:$a"'], { cwd: tmpdir(), env: ENV, respond: answerPrompts('Allow?', ['yes\r']) });
    expect(run.output).toContain('tty:yes');
    expect(run.output).not.toContain('\r');
    expect(run.exitCode).toBe(0);
  });

  it('passes the environment, the exit code and awkward words through', async () => {
    const word = `it's "odd" $HOME \\ *`;
    const run = await runInPty(['bash', '-c', 'printf "%s|%s\\n" "$CORRAL_PTY_TEST" "$1"; exit 3', 'name', word], { cwd: tmpdir(), env: { ...ENV, CORRAL_PTY_TEST: 'passed' } });
    expect(run.output).toContain(`passed|${word}\n`);
    expect(run.exitCode).toBe(3);
  });

  it('quotes words for the shell', () => {
    expect(shellQuote('npm')).toBe('npm');
    expect(shellQuote("a'b c")).toBe(`'a'\\''b c'`);
    expect(shellQuote('')).toBe("''");
  });
});
