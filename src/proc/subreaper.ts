import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { arch } from 'node:process';
import { findExecutable } from './find-executable.js';
import { runProgram } from './run-program.js';

// Without a sandbox, a command's processes must all end with it, also those that left its
// process group with setsid (daemons, `setsid -f`, `nohup … & disown`). Node cannot call
// prctl(PR_SET_CHILD_SUBREAPER) itself, so a few lines of perl (or python3, where there is
// no perl) do it in a small process between corral and the command's bash: every orphan
// of the command is re-parented to that process instead of to init, so once bash has
// exited it finds each one left (their parent is itself) and kills it, until none is left,
// then exits with bash's status. Killing the helper itself with SIGKILL is the one way
// past it: its orphans then go to init, as they do without it.

/** The run's warning when no helper works: setsid processes can then outlive their command. */
export const NO_SUBREAPER_WARNING = 'processes: no child subreaper works here, so a process a command detaches with setsid can outlive it';

/** How a command's processes are all ended without a sandbox. */
export type Subreaper =
  | {
      kind: 'perl' | 'python3';
      /** The interpreter that works as one (a path). */
      program: string;
      /** `argv` run under the helper. */
      wrap(argv: string[]): string[];
      /** Helpers started ahead of their command (perl's), which read it from fd 3. */
      ready?: ReadyHelpers;
    }
  | { kind: 'none'; /** Why neither helper works here, for the warning. */ reason: string };

/**
 * The protocol of both helpers: `<parent pid> <command…>`. They exit 125 when they cannot
 * become a subreaper or their parent (corral) is already gone. Without a command, perl's
 * reads it from fd 3 (cwd, argc, the argv, then the environment's NAME=value entries,
 * NUL-separated) and runs it as if given; without either (the probe) both exit 0 at once. On SIGTERM, SIGINT or SIGHUP, and when corral dies (the parent
 * death signal is SIGTERM), they kill the command and everything it started. A command
 * killed by a signal is reported by the helper dying of the same signal (not dumping core).
 */
const PERL_HELPER = String.raw`
my ($prctl, $parent, @command) = @ARGV;
syscall($prctl, 36, 1, 0, 0, 0) == 0 or do { print STDERR "corral: cannot become a child subreaper: $!\n"; exit 125 };
syscall($prctl, 1, 15, 0, 0, 0);
exit 125 if getppid() != $parent;
if (!@command) {
  open my $spec_in, '<&=', 3 or exit 0;
  my $spec = do { local $/; <$spec_in> };
  close $spec_in;
  exit 0 unless defined $spec && length $spec;
  my ($cwd, $argc, @rest) = split /\0/, $spec, -1;
  @command = splice @rest, 0, $argc;
  %ENV = map { split /=/, $_, 2 } @rest;
  chdir $cwd or do { print STDERR "failed to start: $cwd: $!\n"; exit 127 };
}
my ($child, $stop);
$SIG{$_} = sub { $stop = 1; kill 'KILL', $child if $child } for qw(TERM INT HUP);
$child = fork;
if (!defined $child) { print STDERR "failed to start: fork: $!\n"; exit 125 }
if ($child == 0) {
  $SIG{$_} = 'DEFAULT' for qw(TERM INT HUP);
  setpgrp(0, 0);
  exec { $command[0] } @command;
  print STDERR "failed to start: $command[0]: $!\n";
  exit 127;
}
kill 'KILL', $child if $stop;
my $status;
while (1) {
  my $pid = waitpid(-1, 0);
  if ($pid == $child) { $status = $?; last }
  if ($pid < 0) { $status = 255 << 8; last }
}
my $deadline = time + 5;
while (time < $deadline) {
  my $pid;
  1 while ($pid = waitpid(-1, 1)) > 0;
  last if $pid < 0;
  my @left;
  if (opendir my $proc, '/proc') {
    for my $entry (readdir $proc) {
      next unless $entry =~ /^\d+$/;
      open my $stat, '<', "/proc/$entry/stat" or next;
      my $line = <$stat>;
      push @left, $entry if defined $line && $line =~ /\)\s+\S+\s+(\d+)/ && $1 == $$;
    }
  }
  if (@left) { kill 'KILL', @left; waitpid(-1, 0) } else { select undef, undef, undef, 0.01 }
}
print STDERR "corral: could not end every process the command started\n" if waitpid(-1, 1) == 0;
my $signal = $status & 127;
exit($status >> 8) unless $signal;
$SIG{$_} = 'DEFAULT' for qw(TERM INT HUP);
syscall($prctl, 4, 0, 0, 0, 0);
kill $signal, $$;
exit 128 + $signal;
`;

const PYTHON_HELPER = String.raw`
import ctypes, os, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
parent, command = int(sys.argv[1]), sys.argv[2:]
if libc.prctl(36, 1, 0, 0, 0) != 0:
    sys.stderr.write('corral: cannot become a child subreaper: %s\n' % os.strerror(ctypes.get_errno()))
    sys.exit(125)
libc.prctl(1, signal.SIGTERM, 0, 0, 0)
if os.getppid() != parent: sys.exit(125)
if not command: sys.exit(0)
child, stopped = 0, [False]
def stop(signum, frame):
    stopped[0] = True
    if child:
        try: os.kill(child, signal.SIGKILL)
        except OSError: pass
STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
for s in STOPS: signal.signal(s, stop)
child = os.fork()
if child == 0:
    for s in STOPS + (signal.SIGPIPE, signal.SIGXFSZ): signal.signal(s, signal.SIG_DFL)
    os.setpgid(0, 0)
    try: os.execvp(command[0], command)
    except OSError as error: sys.stderr.write('failed to start: %s: %s\n' % (command[0], error.strerror))
    os._exit(127)
if stopped[0]: stop(0, None)
while True:
    try: pid, status = os.waitpid(-1, 0)
    except ChildProcessError: pid, status = -1, 255 << 8
    if pid in (child, -1): break
deadline = time.monotonic() + 5
while time.monotonic() < deadline:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0: pass
    except ChildProcessError: break
    left = []
    for entry in os.listdir('/proc'):
        if not entry.isdigit(): continue
        try:
            with open('/proc/%s/stat' % entry) as stat: fields = stat.read().rsplit(')', 1)[1].split()
        except (OSError, IndexError): continue
        if int(fields[1]) == os.getpid(): left.append(int(entry))
    for pid in left:
        try: os.kill(pid, signal.SIGKILL)
        except OSError: pass
    if left:
        try: os.waitpid(-1, 0)
        except ChildProcessError: break
    else: time.sleep(0.01)
try:
    if os.waitpid(-1, os.WNOHANG)[0] == 0: sys.stderr.write('corral: could not end every process the command started\n')
except ChildProcessError: pass
if os.WIFSIGNALED(status):
    for s in STOPS: signal.signal(s, signal.SIG_DFL)
    libc.prctl(4, 0, 0, 0, 0)
    os.kill(os.getpid(), os.WTERMSIG(status))
    sys.exit(128 + os.WTERMSIG(status))
sys.exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 255)
`;

/** prctl's system call number, which perl's `syscall` needs; python finds prctl in libc. */
export const PRCTL_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = { x64: 157, arm64: 167, riscv64: 167, loong64: 167, arm: 172, ia32: 172, ppc64: 171, s390x: 172 };

const PROBE_TIMEOUT_MS = 10_000;

// Which helper works is a fact about the machine, found once per process and PATH.
const found = new Map<string, Promise<Subreaper>>();

/**
 * The child subreaper commands run under without a sandbox: perl, else python3 (looked up
 * on corral's PATH), each tried once by running it with no command. Never throws.
 */
export function findSubreaper(searchPath: string = process.env.PATH ?? ''): Promise<Subreaper> {
  let subreaper = found.get(searchPath);
  if (subreaper === undefined) {
    subreaper = probeSubreapers(searchPath);
    found.set(searchPath, subreaper);
  }
  return subreaper;
}

async function probeSubreapers(searchPath: string): Promise<Subreaper> {
  const reasons: string[] = [];
  const candidates: { kind: 'perl' | 'python3'; prefix: (program: string) => string[] | string }[] = [
    {
      kind: 'perl',
      prefix: (perl) => {
        const prctl = PRCTL_SYSCALL[arch];
        return prctl === undefined ? `prctl's system call number on ${arch} is not known` : [perl, '-e', PERL_HELPER, '--', String(prctl)];
      },
    },
    // -I -S: no PYTHON* variable of the command's environment and no site module change the helper.
    { kind: 'python3', prefix: (python) => [python, '-I', '-S', '-c', PYTHON_HELPER] },
  ];
  for (const { kind, prefix } of candidates) {
    const program = findExecutable(kind, searchPath);
    if (program === undefined) {
      reasons.push(`no ${kind} on PATH`);
      continue;
    }
    const argv = prefix(program);
    if (typeof argv === 'string') {
      reasons.push(argv);
      continue;
    }
    const [file, ...args] = argv;
    const probe = await runProgram(file!, [...args, String(process.pid)], { timeoutMs: PROBE_TIMEOUT_MS, env: {} });
    const helper = [...argv, String(process.pid)];
    if (probe.exitCode === 0) return { kind, program, wrap: (command) => [...helper, ...command], ...(kind === 'perl' ? { ready: new ReadyHelpers(helper) } : {}) };
    const said = probe.stderr.toString('utf8').trim().split('\n').pop();
    reasons.push(`${program}: ${said || probe.error || `exit ${probe.exitCode ?? probe.signal}`}`);
  }
  return { kind: 'none', reason: reasons.join('; ') };
}

/** What a helper started ahead needs to know of its command. */
export interface HelperCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * One helper kept started and waiting, with its stdout and stderr pipes, so a command's
 * critical path is no longer corral forking itself and perl starting (two process starts,
 * each slow on a VM), but perl forking and bash starting. The next helper
 * is started as soon as one is taken, while that command runs. A waiting helper holds
 * nothing open for corral (its handles are unref'd) and dies with corral (its parent
 * death signal, before it handles any).
 */
export class ReadyHelpers {
  private waiting: ChildProcess | undefined;
  private readonly failed = new WeakSet<ChildProcess>();

  constructor(private readonly helper: string[]) {}

  /** A started helper, told to run `command`; the caller owns it from here, as from spawn(). */
  run(command: HelperCommand): ChildProcess {
    let helper = this.waiting;
    this.waiting = undefined;
    if (helper === undefined || helper.exitCode !== null || helper.signalCode !== null || this.failed.has(helper)) {
      if (helper !== undefined) helper.kill('SIGKILL');
      helper = this.start();
    }
    setHeld(helper, true);
    const spec = [command.cwd, String(command.argv.length), ...command.argv, ...Object.entries(command.env).map(([name, value]) => `${name}=${value}`)].join('\0');
    const specOut = helper.stdio[3] as Socket;
    // A helper that died has its own exit to report; the write's error adds nothing.
    specOut.on('error', () => undefined);
    specOut.end(spec);
    setImmediate(() => {
      if (this.waiting === undefined) this.waiting = this.start();
    });
    return helper;
  }

  private start(): ChildProcess {
    const [file, ...args] = this.helper;
    const helper = spawn(file!, args, { cwd: '/', env: {}, stdio: ['ignore', 'pipe', 'pipe', 'pipe'], detached: true });
    helper.once('error', () => this.failed.add(helper));
    setHeld(helper, false);
    return helper;
  }
}

/** Whether the helper and its pipes keep corral's event loop alive (only while it runs a command). */
function setHeld(helper: ChildProcess, held: boolean): void {
  for (const handle of [helper, ...helper.stdio]) {
    const ref = handle as unknown as { ref?: () => void; unref?: () => void } | null;
    if (held) ref?.ref?.();
    else ref?.unref?.();
  }
}

/** Whether `command` can be told to a waiting helper: its fields are NUL-separated, so none may hold a NUL. */
export function fitsHelperSpec(command: HelperCommand): boolean {
  const fields = [command.cwd, ...command.argv, ...Object.keys(command.env), ...Object.values(command.env)];
  return !fields.some((field) => field.includes('\0')) && !Object.keys(command.env).some((name) => name.includes('=') || name === '');
}
