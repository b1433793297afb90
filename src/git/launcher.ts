import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { scratchTempPrefix } from '../proc/owner.js';
import { runProgram, type ProgramResult } from '../proc/run-program.js';

// Node's `child_process.spawn` forks corral and waits for the child's exec before it
// returns: every git process holds the one thread that all the tickets of a batch share
// (8–14 ms each on a loaded machine, docs/performance.md "Batch"). So git is started by a
// few long-lived `sh` processes instead, started once per process. Each is a lane: corral
// writes it one command at a time (the folder, the exported environment, files for input
// and output); sh forks a subshell that execs git, waits for it, and answers with the exit
// status. One fork a git, of a small process; corral's thread never forks for git. (One sh
// running every call as a background job forked twice a git, the job and then its
// subshell: about 2 ms more a call here.) The shells run detached, in a session of their
// own, so a Ctrl-C in the terminal reaches neither them nor git. When sh cannot be started
// or has gone, git is spawned directly.

interface Pending {
  resolve(result: ProgramResult): void;
  files: { out: string; err: string; input?: string };
  /** The same call, spawned directly: for a call sh could not start. */
  direct(): Promise<ProgramResult>;
}

interface Call extends Pending {
  id: number;
  /** The command, as sh reads it. */
  line: string;
}

/** One sh and the socket corral talks to it on: it runs one call at a time. */
interface Lane {
  input: NodeJS.WritableStream;
  output: NodeJS.ReadableStream;
  running: Call | undefined;
  buffered: string;
}

type LaunchOptions = { cwd: string; env: Record<string, string>; input?: string };

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** How many gits run at once: a batch's tickets each ask a few at a time; more wait their turn. */
const LANES = Math.min(8, Math.max(4, availableParallelism()));

function quote(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

class ShellLauncher {
  private readonly waiting: Call[] = [];
  private next = 0;
  private gone = false;
  private readonly closeLanes: string;
  /** Whether the first sh has started the other lanes' shells yet. */
  private lanesStarted = false;

  private constructor(
    private readonly shell: ChildProcess,
    private readonly lanes: Lane[],
    private readonly dir: string,
    /** The other lanes' descriptors in the first sh, which git is not to inherit. */
    private readonly laneFds: number[],
  ) {
    this.closeLanes = laneFds.map((fd) => ` ${fd}<&-`).join('');
    for (const lane of lanes) {
      lane.output.setEncoding('utf8');
      lane.output.on('data', (chunk: string) => this.answer(lane, chunk));
      lane.output.on('end', () => this.end());
      for (const stream of new Set([lane.input, lane.output])) stream.on('error', () => this.end());
    }
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
      // The first lane is this sh's stdin and stdout; each other lane is a socket on fd 3 and
      // up, read by an sh this one starts (its script from the socket, its answers to it).
      const extra = Array.from({ length: LANES - 1 }, (_, i) => i + 3);
      const shell = spawn('/bin/sh', [], { cwd: '/', env: {}, stdio: ['pipe', 'pipe', 'ignore', ...extra.map(() => 'pipe' as const)], detached: true });
      if (shell.pid === undefined) throw new Error('sh did not start');
      const lanes: Lane[] = [
        { input: shell.stdin!, output: shell.stdout!, running: undefined, buffered: '' },
        ...extra.map((fd) => {
          const socket = shell.stdio[fd] as Duplex;
          return { input: socket, output: socket, running: undefined, buffered: '' };
        }),
      ];
      return new ShellLauncher(shell, lanes, dir, extra);
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
   * namespace sharing the temp dir took this process for a dead one. The shells stay for
   * the calls they run; every later one is spawned directly.
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
    const line = `( ${command} ) <${files.input === undefined ? '/dev/null' : quote(files.input)} >${quote(files.out)} 2>${quote(files.err)}${this.closeLanes}; echo "${id} $?"\n`;
    return new Promise<ProgramResult>((resolve) => {
      this.waiting.push({ id, line, resolve, files, direct });
      this.dispatch();
    });
  }

  /** Gives waiting calls to free lanes; sh keeps corral alive only while git runs for it. */
  private dispatch(): void {
    for (const lane of this.lanes) {
      if (this.waiting.length === 0) break;
      if (lane.running !== undefined) continue;
      lane.running = this.waiting.shift()!;
      lane.input.write(lane.running.line);
    }
    if (!this.lanesStarted && this.next > 1) {
      // At the second call, and after what the first sh was just given: a process that runs
      // git once (a hook) starts no more shells, and no call waits on their forks but one
      // given to another lane before its sh runs (it waits in that lane's socket). Each reads
      // its commands from its socket and answers on it.
      this.lanesStarted = true;
      const starts = this.laneFds.map((fd) => `/bin/sh <&${fd} >&${fd}${this.closeLanes} &`);
      this.lanes[0]!.input.write(`${starts.join(' ')}\nexec${this.closeLanes}\n`);
    }
    if (this.lanes.some((lane) => lane.running !== undefined)) this.busy();
    else this.idle();
  }

  private answer(lane: Lane, chunk: string): void {
    lane.buffered += chunk;
    for (let newline = lane.buffered.indexOf('\n'); newline !== -1; newline = lane.buffered.indexOf('\n')) {
      const [id, status] = lane.buffered.slice(0, newline).split(' ');
      lane.buffered = lane.buffered.slice(newline + 1);
      const call = lane.running;
      if (call === undefined || call.id !== Number(id)) continue;
      lane.running = undefined;
      void this.collect(call, Number(status));
    }
    this.dispatch();
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

  /** A shell has gone (killed, or its socket broke): what they were running fails, what waits runs directly, as does every later call. */
  private end(): void {
    if (this.gone) return;
    this.gone = true;
    for (const lane of this.lanes) {
      lane.running?.resolve({ exitCode: null, signal: null, stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), timedOut: false, error: 'the shell that starts git ended' });
      lane.running = undefined;
    }
    for (const call of this.waiting.splice(0)) void call.direct().then(call.resolve);
    this.idle();
  }

  private busy(): void {
    for (const handle of this.handles()) handle.ref?.();
  }

  private idle(): void {
    for (const handle of this.handles()) handle.unref?.();
  }

  private handles(): { ref?: () => void; unref?: () => void }[] {
    return [this.shell, ...this.lanes.flatMap((lane) => [lane.input, lane.output])] as unknown as { ref?: () => void; unref?: () => void }[];
  }
}

let launcher: ShellLauncher | null | undefined;

/**
 * Runs `file` (git) with exactly `env`, in its own session, to its end: through the shared
 * shells when there are, else spawned directly. Never throws.
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
