import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { scratchTempPrefix } from '../proc/owner.js';
import { runProgram, type ProgramResult } from '../proc/run-program.js';

// Node's `child_process.spawn` forks corral and waits for the child's exec before it
// returns: every git process holds the one thread that all the tickets of a batch share
// (8–14 ms each on a loaded machine, docs/performance.md "Batch"). So git is started by
// one long-lived `sh` instead, started once per process: corral writes a line (the
// command, its folder, its environment, files for its output), sh forks (a small
// process, cheap to fork) and answers with the exit status; corral's thread never forks
// for git. sh runs detached, in a session of its own, so a Ctrl-C in the terminal reaches
// neither it nor git, as before. When sh cannot be started or has gone, git is spawned
// directly.

interface Pending {
  resolve(result: ProgramResult): void;
  files: { out: string; err: string; input?: string };
  /** The same call, spawned directly: for a call sh could not start. */
  direct(): Promise<ProgramResult>;
}

type LaunchOptions = { cwd: string; env: Record<string, string>; input?: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

class ShellLauncher {
  private readonly pending = new Map<number, Pending>();
  private next = 0;
  private buffered = '';
  private gone = false;

  private constructor(
    private readonly shell: ChildProcess,
    private readonly dir: string,
  ) {
    shell.stdout!.setEncoding('utf8');
    shell.stdout!.on('data', (chunk: string) => this.answer(chunk));
    shell.stdin!.on('error', () => this.end());
    shell.on('error', () => this.end());
    shell.on('exit', () => this.end());
    this.idle();
  }

  static start(): ShellLauncher | null {
    let dir: string | undefined;
    try {
      // Named after this process, so a later run removes it if this one is killed.
      dir = mkdtempSync(path.join(tmpdir(), scratchTempPrefix('git')));
      const made = dir;
      process.once('exit', () => rmSync(made, { recursive: true, force: true }));
      const shell = spawn('/bin/sh', [], { cwd: '/', env: {}, stdio: ['pipe', 'pipe', 'ignore'], detached: true });
      if (shell.pid === undefined) throw new Error('sh did not start');
      return new ShellLauncher(shell, dir);
    } catch {
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      return null;
    }
  }

  get usable(): boolean {
    return !this.gone && !this.folderLost;
  }

  /**
   * The folder of the calls' files is gone: a temp cleaner, or a corral in another pid
   * namespace sharing the temp dir took this process for a dead one. sh stays for the
   * calls it runs; every later one is spawned directly.
   */
  private folderLost = false;

  async run(file: string, args: string[], options: LaunchOptions): Promise<ProgramResult> {
    const direct = () => spawnGit(file, args, options);
    const id = this.next++;
    const base = path.join(this.dir, String(id));
    const files = { out: `${base}.out`, err: `${base}.err`, ...(options.input === undefined ? {} : { input: `${base}.in` }) };
    if (files.input !== undefined) {
      try {
        await writeFile(files.input, options.input ?? '', { mode: 0o600 });
      } catch {
        this.folderLost = true;
        return direct();
      }
    }
    const exports = Object.entries(options.env).map(([name, value]) => `export ${name}=${quote(value)}`);
    // sh runs in `/`: a relative folder is corral's, as it would be for spawn.
    const command = ['cd', quote(path.resolve(options.cwd)), ...exports.flatMap((line) => ['&&', line]), '&&', 'exec', quote(file), ...args.map(quote)].join(' ');
    // `jobs` first: a non-interactive dash reaps finished background jobs only when asked
    // (it has no SIGCHLD handler), so without it every git of a long batch stayed a zombie
    // of this sh, each holding a pid and a slot of the user's process limit.
    const line = `jobs >/dev/null 2>&1; { ( ${command} ) <${files.input === undefined ? '/dev/null' : quote(files.input)} >${quote(files.out)} 2>${quote(files.err)}; echo "${id} $?"; } &\n`;
    const done = new Promise<ProgramResult>((resolve) => this.pending.set(id, { resolve, files, direct }));
    this.busy();
    this.shell.stdin!.write(line);
    return done;
  }

  private answer(chunk: string): void {
    this.buffered += chunk;
    for (let newline = this.buffered.indexOf('\n'); newline !== -1; newline = this.buffered.indexOf('\n')) {
      const [id, status] = this.buffered.slice(0, newline).split(' ');
      this.buffered = this.buffered.slice(newline + 1);
      const call = this.pending.get(Number(id));
      if (call === undefined) continue;
      this.pending.delete(Number(id));
      void this.collect(call, Number(status));
    }
    if (this.pending.size === 0) this.idle();
  }

  private async collect(call: Pending, status: number): Promise<void> {
    const [out, err] = await Promise.all([readFile(call.files.out).catch(() => null), readFile(call.files.err).catch(() => null)]);
    await Promise.all(Object.values(call.files).map((file) => rm(file, { force: true })));
    // sh makes both files before it runs the command, and says 2 when it cannot: with
    // neither there, git never ran, and runs now, directly.
    if (out === null && err === null && status === 2) {
      this.folderLost = true;
      call.resolve(await call.direct());
      return;
    }
    const [stdout, stderr] = [out ?? Buffer.alloc(0), err ?? Buffer.alloc(0)];
    // A program sh cannot find or a folder it cannot enter is said on stderr (exit 127 or 2), as spawn's ENOENT would be.
    call.resolve({ exitCode: Number.isInteger(status) ? status : null, signal: null, stdout, stderr, timedOut: false });
  }

  /** sh has gone (killed, or its pipe broke): what it was running fails, and git is spawned directly from now on. */
  private end(): void {
    if (this.gone) return;
    this.gone = true;
    for (const call of this.pending.values()) {
      call.resolve({ exitCode: null, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), timedOut: false, error: 'the shell that starts git ended' });
    }
    this.pending.clear();
    this.idle();
  }

  // sh keeps corral alive only while git runs for it.
  private busy(): void {
    this.shell.ref();
    (this.shell.stdout as unknown as { ref?: () => void }).ref?.();
    (this.shell.stdin as unknown as { ref?: () => void }).ref?.();
  }

  private idle(): void {
    this.shell.unref();
    (this.shell.stdout as unknown as { unref?: () => void }).unref?.();
    (this.shell.stdin as unknown as { unref?: () => void }).unref?.();
  }
}

let launcher: ShellLauncher | null | undefined;

/**
 * Runs `file` (git) with exactly `env`, in its own session, to its end: through the shared
 * sh when there is one, else spawned directly. Never throws.
 */
export function launchGit(file: string, args: string[], options: LaunchOptions): Promise<ProgramResult> {
  if (launcher === undefined) launcher = ShellLauncher.start();
  if (launcher === null || !launcher.usable || !Object.keys(options.env).every((name) => NAME.test(name))) return spawnGit(file, args, options);
  return launcher.run(file, args, options);
}

/** git spawned from this process, in its own session. */
function spawnGit(file: string, args: string[], options: LaunchOptions): Promise<ProgramResult> {
  return runProgram(file, args, { cwd: options.cwd, env: options.env, detached: true, ...(options.input === undefined ? {} : { input: options.input }) });
}
