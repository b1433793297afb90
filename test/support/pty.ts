import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface PtyRun {
  exitCode: number;
  /** Everything the process wrote to the terminal (stdout and stderr, and the echo of what was typed), without `\r`. */
  output: string;
}

export interface PtyOptions {
  cwd: string;
  /** The whole environment the command sees (SHELL is set to /bin/bash, which `script` runs it with). */
  env: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Called with the output so far each time more arrives; a string it returns is typed into the terminal (`y\r`). */
  respond?: (outputSoFar: string) => string | undefined;
}

const SCRIPT = existsSync('/usr/bin/script') ? '/usr/bin/script' : 'script';

/** A word as a POSIX shell reads it back unchanged: bare when safe, else in single quotes. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * Runs `command` with a pseudo-terminal as its stdin, stdout and stderr, through util-linux
 * `script` (no native modules), answering prompts as `respond` says. Rejects on timeout,
 * with the output so far in the message.
 */
export function runInPty(command: string[], options: PtyOptions): Promise<PtyRun> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env)) if (value !== undefined) env[name] = value;
  env.SHELL = '/bin/bash';
  const child = spawn(SCRIPT, ['-qefc', command.map(shellQuote).join(' '), '/dev/null'], { cwd: options.cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let raw = '';
  const seen = (): string => raw.replace(/\r/g, '');

  return new Promise<PtyRun>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command.join(' ')} did not finish within ${options.timeoutMs ?? 30_000} ms; output so far:\n${seen()}`));
    }, options.timeoutMs ?? 30_000);
    const onData = (chunk: string): void => {
      raw += chunk;
      const reply = options.respond?.(seen());
      if (reply !== undefined && child.stdin.writable) child.stdin.write(reply);
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', onData);
    // The pty may already be gone when a late answer is typed.
    child.stdin.on('error', () => undefined);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      child.stdin.end();
      resolve({ exitCode: code ?? (signal === null ? -1 : 128), output: seen() });
    });
  });
}

/** A `respond` that types `answers[n]` once `marker` has appeared n+1 times. */
export function answerPrompts(marker: string, answers: string[]): (outputSoFar: string) => string | undefined {
  let sent = 0;
  return (output) => {
    if (sent >= answers.length || output.split(marker).length - 1 <= sent) return undefined;
    return answers[sent++];
  };
}
