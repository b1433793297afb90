import { spawn, type ChildProcess } from 'node:child_process';
import { InternalError } from '../errors.js';
import { PRCTL_SYSCALL } from './subreaper.js';
import { arch } from 'node:process';

// One sandbox for many commands: bubblewrap is started once (per view of the file
// system) with this small perl program inside as the PID namespace's init (bwrap
// --as-pid-1), and each command is a frame on its stdin. Perl because it starts in a few
// milliseconds with a few MB, is on nearly every machine (the no-sandbox subreaper uses
// it already), and can fork, setsid, dup2 and exec without a compiler; node would cost
// 40 ms and 40 MB a run and cannot setsid a child it forks.
//
// Why init: inside the namespace no command can signal it (the kernel drops every signal
// it has no handler for, SIGKILL included), every orphan comes to it, and kill(-1) from it
// reaches every other process in the namespace at once, as the kernel's own teardown of
// a namespace does. So once a command's first process has ended, kill(-1) ends everything
// it started (grandchildren, `setsid` daemons, double forks) before its exit is reported:
// the per-command guarantee of a bubblewrap per command. Commands therefore run one at a
// time; the client queues them. Each command is forked straight from the supervisor and
// leads a session of its own; it can read or trace nothing of the supervisor (not
// dumpable), which holds the other commands' specs and the pipe to corral. One fork a
// command, not two: on a VM a fork and an exit of perl cost about 3 ms, as much as the
// rest of the command's start. When its stdin closes (corral ended it, or died), it kills
// everything and exits, and the namespace goes with it; `--die-with-parent` covers the rest.
//
// Without a sandbox the same program runs as a child subreaper (`reaper`): orphans come
// to it as they would to init, and it ends a command's process group and then each orphan
// until it has no child left. There a command can kill it like any process of its user;
// that command is then reported killed, and the next one gets a new supervisor.
//
// Frames, both ways: a type byte, a 32-bit id and a 32-bit length (big-endian), then the
// body. To it: `C` a command (fields, each a 32-bit length then bytes: cwd, argc, the argv,
// then NAME=value entries), `K` kill the command. From it: `S` the command's pid, `O`/`E` a
// chunk of the command's stdout/stderr, `X` its end (`exit N`, `signal N` or `killed`).
const SUPERVISOR_SCRIPT = String.raw`
my ($prctl, $setsid, $reaper, $execve) = @ARGV;
# Outside a PID namespace (no sandbox): a child subreaper, so every orphan of a command
# comes to it, as it would to a namespace's init.
if ($reaper) {
  $prctl or do { print STDERR "corral: prctl's system call number is not known here\n"; exit 125 };
  syscall($prctl, 36, 1, 0, 0, 0) == 0 or do { print STDERR "corral: cannot become a child subreaper: $!\n"; exit 125 };
}
# Not dumpable: no command can read its memory or environ (/proc/<pid>/mem, /proc/<pid>/environ).
syscall($prctl, 4, 0, 0, 0, 0) if $prctl;
# Nothing but stdin, stdout and stderr came from corral. A descriptor beyond them was left
# open by whatever started corral (Node passes them on, and so does bubblewrap): a command
# must not get it, for one open on a folder outside the sandbox reaches that folder's
# files. close_range (Linux 5.9, the same number everywhere), else each one listed.
if (syscall(436, 3, 4294967295, 0) != 0) {
  require POSIX;
  if (opendir my $fds, '/proc/self/fd') { POSIX::close($_) for grep { /^\d+$/ && $_ > 2 } readdir $fds }
}
if (!$setsid) { require POSIX }
binmode STDIN; binmode STDOUT;
pipe(my $wake_r, my $wake_w) or die "pipe: $!";
{ my $old = select $wake_w; $| = 1; select $old; }
# One byte at most in the wake pipe, however many children end, so the handler never blocks.
my $woken = 0;
$SIG{CHLD} = sub { syswrite $wake_w, 'x' unless $woken++ };
$SIG{PIPE} = 'IGNORE';
# Outside a namespace anyone of the user can signal it (pkill perl): it ends what it ran
# first. Inside one, a handler would let commands signal init, so there are none.
if ($reaper) { $SIG{$_} = sub { end_all(); exit 0 } for qw(TERM INT HUP) }
my ($active, $ready, $in, $want_ready) = (undef, undef, '', 0);
sub frame {
  my $buf = pack('aNN', $_[0], $_[1], length $_[2]) . $_[2];
  while (length $buf) {
    my $n = syswrite STDOUT, $buf;
    if (!defined $n) { next if $!{EINTR}; end_all(); exit 0 }
    substr($buf, 0, $n) = '';
  }
}
# The processes whose parent is this one: with a subreaper, every process a command left.
sub children {
  my @found;
  opendir my $proc, '/proc' or return;
  for my $entry (readdir $proc) {
    next unless $entry =~ /^\d+$/;
    open my $stat, '<', "/proc/$entry/stat" or next;
    my $line = <$stat>;
    push @found, $entry if defined $line && $line =~ /\)\s+\S+\s+(\d+)/ && $1 == $$;
  }
  return @found;
}
# Ends every process the active command started. As init, kill(-1) reaches them all at
# once; as a subreaper, its process group goes first, then each orphan that comes here,
# until no child is left (then none of its processes is: each has a parent, and the
# eldest living one is a child of this one).
sub end_all {
  if (!$reaper) { kill 'KILL', -1; 1 while waitpid(-1, 0) > 0; return }
  if ($active) {
    kill 'KILL', -$active->{pid};
    # The command itself only while it is not reaped: a reaped pid may be another's by now.
    kill 'KILL', $active->{pid} unless defined $active->{status};
  }
  my $deadline = time + 5;
  while (1) {
    my $pid;
    1 while ($pid = waitpid(-1, 1)) > 0;
    last if $pid < 0;
    # What cannot be signalled (another user's, started through sudo) is left, not waited for.
    my @killed = grep { kill 'KILL', $_ } children();
    last unless @killed;
    if (time > $deadline) { print STDERR "corral: could not end every process a command started\n"; last }
    select undef, undef, undef, 0.002;
  }
}
sub reap {
  while ((my $pid = waitpid(-1, 1)) > 0) {
    if ($active && !defined $active->{status} && $pid == $active->{pid}) {
      # A child forked ahead that died before it took its command (killed from outside while
      # it waited; the spec still sits in its pipe) did not run it: it is forked again now.
      next if !$active->{killed} && untaken($active) && restart($active);
      $active->{status} = $?;
      end_all();
    }
    elsif ($ready && $pid == $ready->{pid}) { $ready = undef }
  }
}
# What a forked child does to become the command, before its command is known: it leads a
# session and process group of its own and holds only its own pipes. Only what this
# script changed is put back: exec resets handlers, not an ignored SIGPIPE. A child forked
# ahead does this while it waits, so that what is left once its command comes is small:
# each page it writes until then is a copy of one of the supervisor's (a fork shares them).
sub detach {
  my ($out_w, $err_w) = @_;
  $SIG{$_} = 'DEFAULT' for qw(CHLD PIPE TERM INT HUP);
  if ($setsid) { syscall($setsid) } else { POSIX::setsid() }
  open STDIN, '<', '/dev/null';
  open STDOUT, '>&', $out_w;
  open STDERR, '>&', $err_w;
  close $_ for $out_w, $err_w;
}
# The command itself: its folder, then exec with exactly its environment. By the system
# call where its number is known: perl's own exec would first rebuild this process's
# environment from %ENV (a copy of every page that touches), about 0.5 ms a command here.
# A name without a slash is looked for on the command's PATH, as execvp does.
sub become {
  my ($spec) = @_;
  my ($cwd, $argc, @rest) = unpack '(N/a)*', $spec;
  my @argv = splice @rest, 0, $argc;
  chdir $cwd or do { print STDERR "failed to start: $cwd: $!\n"; exit 127 };
  if ($execve) {
    my ($path) = map { substr $_, 5 } grep { /^PATH=/ } @rest;
    my @dirs = defined $path ? split(/:/, $path, -1) : ('/bin', '/usr/bin');
    my @files = !length $argv[0] ? () : $argv[0] =~ m{/} ? ($argv[0]) : map { (length $_ ? $_ : '.') . "/$argv[0]" } @dirs ? @dirs : ('');
    my ($argvp, $envp) = (pack('p*', @argv, undef), pack('p*', @rest, undef));
    # As execvp: a file not there (ENOENT 2, ENOTDIR 20, ESTALE 116, ENODEV 19, ETIMEDOUT
    # 110) or not runnable (EACCES 13, said if nothing else was found) lets the search go
    # on; one without a #! line (ENOEXEC 8) runs with /bin/sh. The numbers are Linux's on
    # every architecture in the table; compared as numbers, as %! would run Errno's code
    # in this child, a copy of each page that touches.
    my ($errno, $denied, $searched) = (2, 0, 1);
    for my $file (@files) {
      syscall($execve, $file, $argvp, $envp);
      $errno = $! + 0;
      if ($errno == 8) {
        # In variables: syscall() takes no read-only string.
        my @sh = ('/bin/sh', $file, @argv[1 .. $#argv]);
        syscall($execve, $sh[0], pack('p*', @sh, undef), $envp);
        ($errno, $searched) = ($! + 0, 0);
        last;
      }
      $denied ||= $errno == 13;
      next if $errno == 2 || $errno == 13 || $errno == 20 || $errno == 116 || $errno == 19 || $errno == 110;
      $searched = 0;
      last;
    }
    $! = $searched && $denied ? 13 : $errno;
  } else {
    %ENV = map { split /=/, $_, 2 } @rest;
    exec { $argv[0] } @argv;
  }
  print STDERR "failed to start: $argv[0]: $!\n";
  exit 127;
}
# A command's process: forked for its body at once, or (no body) forked ahead while corral
# asks the model for its next call, to wait for its command on a pipe of its own (a fork of
# this program costs about 2 ms on a VM, most of what the supervisor adds to a command;
# when the supervisor goes, that pipe ends and so does the child). Its pid, the read ends
# of its output, and for one forked ahead the pipe's write end and a read end kept here:
# it tells, when the child ends, whether the child took its command. Or why it failed; a
# lexical handle closes itself as it goes out of scope.
sub fork_command {
  my ($body) = @_;
  my ($spec_r, $spec_w);
  if (!defined $body) { pipe($spec_r, $spec_w) or return "pipe: $!" }
  pipe(my $out_r, my $out_w) or return "pipe: $!";
  pipe(my $err_r, my $err_w) or return "pipe: $!";
  my $pid = fork;
  defined $pid or return "fork: $!";
  if ($pid == 0) {
    close $_ for grep { defined } $wake_r, $wake_w, $out_r, $err_r, $spec_w;
    detach($out_w, $err_w);
    if (!defined $body) {
      $body = do { local $/; <$spec_r> };
      exit 0 unless defined $body && length $body;
      close $spec_r;
    }
    become($body);
  }
  return { pid => $pid, out => $out_r, err => $err_r, spec => $spec_w, spec_r => $spec_r, ended => pidfd($pid) };
}
# A descriptor that select() sees readable once process $pid has ended (Linux 5.3's
# pidfd_open, the same number on every architecture), or undef where there is none. The
# end of a command must not rest on SIGCHLD alone: perl runs its handler only between its
# own operations, so a SIGCHLD that comes just before select() is entered writes nothing
# to the wake pipe until select() returns, which, with nothing else to wake it, is never.
sub pidfd {
  my $fd = syscall(434, $_[0] + 0, 0);
  return undef if $fd < 0;
  open(my $fh, '<&=', $fd) or return undef;
  return $fh;
}
sub prefork {
  return if $ready;
  my $child = fork_command(undef);
  $ready = $child if ref $child;
}
# Whether the command's spec is still in the pipe of the child forked ahead for it: its
# bytes, or the end of the pipe once taken. Its write end is closed; the select is there
# so that a write end held open anyway could never block the supervisor here.
sub untaken {
  my ($command) = @_;
  my $fh = delete $command->{spec_r} or return 0;
  my $rin = '';
  vec($rin, fileno($fh), 1) = 1;
  return 0 if select(my $rout = $rin, undef, undef, 0) <= 0;
  return sysread($fh, my $byte, 1) ? 1 : 0;
}
sub restart {
  my ($command) = @_;
  my $child = fork_command($command->{body});
  return 0 unless ref $child;
  @{$command}{qw(pid out err ended)} = @{$child}{qw(pid out err ended)};
  frame('S', $command->{id}, $child->{pid});
  return 1;
}
sub start {
  my ($id, $body) = @_;
  if ($active) { frame('X', $id, 'busy'); return }
  $want_ready = 0;
  if (my $child = $ready) {
    $ready = undef;
    my $buf = $body;
    while (length $buf) {
      my $n = syswrite $child->{spec}, $buf;
      if (!defined $n) { next if $!{EINTR}; last }
      substr($buf, 0, $n) = '';
    }
    close $child->{spec};
    if (!length $buf) {
      $active = { %$child, id => $id, body => $body };
      frame('S', $id, $child->{pid});
      return;
    }
    # The waiting child is gone (killed from outside): the command is forked as it comes.
    kill 'KILL', $child->{pid};
  }
  my $child = fork_command($body);
  if (!ref $child) { frame('X', $id, "error $child"); return }
  $active = { %$child, id => $id };
  frame('S', $id, $child->{pid});
}
sub finish {
  my $status = $active->{status};
  my $how = $active->{killed} ? 'killed' : ($status & 127) ? 'signal ' . ($status & 127) : 'exit ' . ($status >> 8);
  my $id = $active->{id};
  $active = undef;
  frame('X', $id, $how);
  # Forked ahead only once a millisecond passes without the next command: one that
  # comes at once (a scripted model) would find the fork in its way all the same, and
  # a waiting child makes every page this program touches meanwhile a copy.
  $want_ready = 1;
}
frame('R', 0, '');
$want_ready = 1;
while (1) {
  my $rin = '';
  vec($rin, fileno(STDIN), 1) = 1;
  vec($rin, fileno($wake_r), 1) = 1;
  if ($active) { for my $fh (grep { defined } @{$active}{qw(out err)}) { vec($rin, fileno($fh), 1) = 1 } }
  my $running = $active && !defined $active->{status};
  vec($rin, fileno($active->{ended}), 1) = 1 if $running && $active->{ended};
  # Once the command's processes are ended, its pipes get 2 s of silence to close: one
  # held by a process it could not end (another user's) must not hold the command.
  my $draining = $active && defined $active->{status};
  # Without a pidfd, a command's end that SIGCHLD failed to wake it for is found by looking again.
  my $n = select(my $rout = $rin, undef, undef, $draining ? 2 : $running && !$active->{ended} ? 0.05 : $want_ready && !$active ? 0.001 : undef);
  if ($n < 0) { reap(); next }
  if ($n == 0 && $want_ready && !$active) { $want_ready = 0; prefork(); next }
  if ($n == 0 && $draining) { close $_ for grep { defined } @{$active}{qw(out err)}; @{$active}{qw(out err)} = (undef, undef) }
  if (vec($rout, fileno($wake_r), 1)) { sysread $wake_r, my $junk, 4096; $woken = 0 }
  reap();
  if ($active) {
    for my $stream ('out', 'err') {
      my $fh = $active->{$stream};
      next unless defined $fh && vec($rout, fileno($fh), 1);
      my $got = sysread $fh, my $chunk, 65536;
      next if !defined $got && ($!{EINTR} || $!{EAGAIN});
      if ($got) { frame($stream eq 'out' ? 'O' : 'E', $active->{id}, $chunk) } else { close $fh; $active->{$stream} = undef }
    }
  }
  if (vec($rout, fileno(STDIN), 1)) {
    my $got = sysread STDIN, my $chunk, 65536;
    if (!defined $got) { next if $!{EINTR}; $got = 0 }
    if (!$got) { end_all(); exit 0 }
    $in .= $chunk;
    while (length $in >= 9) {
      my ($type, $id, $len) = unpack 'aNN', $in;
      last if length $in < 9 + $len;
      my $body = substr $in, 9, $len;
      substr($in, 0, 9 + $len) = '';
      if ($type eq 'C') { start($id, $body) }
      elsif ($type eq 'K') {
        # As a subreaper, the command itself too: it may not lead its group yet (setsid comes after fork).
        # Once it has ended (its pipes still open), its real end is reported: only the wait stops.
        if ($active && $active->{id} == $id && defined $active->{status}) { close $_ for grep { defined } @{$active}{qw(out err)}; @{$active}{qw(out err)} = (undef, undef) }
        elsif ($active && $active->{id} == $id) { $active->{killed} = 1; $reaper ? kill('KILL', -$active->{pid}, $active->{pid}) : kill('KILL', -1) }
      }
    }
  }
  finish() if $active && defined $active->{status} && !defined $active->{out} && !defined $active->{err};
}
`;

/** setsid's system call number, so the supervisor needs no module; elsewhere it loads POSIX. */
const SETSID_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = { x64: 112, arm64: 157, riscv64: 157, loong64: 157, arm: 66, ia32: 66, ppc64: 66, s390x: 66 };
/** execve's system call number, so a command is exec'd with its environment as given; elsewhere perl's exec after %ENV. */
const EXECVE_SYSCALL: Partial<Record<NodeJS.Architecture, number>> = { x64: 59, arm64: 221, riscv64: 221, loong64: 221, arm: 11, ia32: 11, ppc64: 11, s390x: 11 };

/**
 * The supervisor's own argv: to run as the init of a bubblewrap sandbox (`--as-pid-1`), or
 * with `reaper` as a child subreaper where there is no sandbox (prctl is Linux's, and its
 * system call number must be known: see PRCTL_SYSCALL).
 */
export function supervisorArgv(perl: string, { reaper = false }: { reaper?: boolean } = {}): string[] {
  return [perl, '-e', SUPERVISOR_SCRIPT, '--', String(PRCTL_SYSCALL[arch] ?? 0), String(SETSID_SYSCALL[arch] ?? 0), reaper ? '1' : '0', String(EXECVE_SYSCALL[arch] ?? 0)];
}

/** What the supervisor runs: the argv in `cwd` with exactly `env`, stdin at EOF. */
export interface SupervisedCommand {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

/**
 * How a command ended, everything it started ended too: its exit code, the signal that
 * killed it, killed as told (`kill()`), or it could not be started (no process, no pipe).
 */
export type SupervisedEnd = { kind: 'exit'; code: number } | { kind: 'signal'; signal: number } | { kind: 'killed' } | { kind: 'error'; message: string };

export interface SupervisedRun {
  /** Settles once the command and all it started are gone; rejects with an InternalError when the supervisor fails. */
  done: Promise<SupervisedEnd>;
  /** Kills the command and everything it started (the timeout, the interrupt). */
  kill(): void;
}

/** How long the supervisor has to report a killed command's end before it is taken for broken. */
const KILL_GRACE_MS = 10_000;
/** How long `close` waits for the supervisor to end everything and exit before killing bubblewrap. */
const CLOSE_GRACE_MS = 5_000;
const HEADER_BYTES = 9;
const STDERR_KEPT = 2_000;

/** Whether a command can be told to the supervisor: exec takes no NUL in an argument or variable. */
export function fitsSupervisor(command: SupervisedCommand): boolean {
  const fields = [command.cwd, ...command.argv, ...Object.keys(command.env), ...Object.values(command.env)];
  return !fields.some((field) => field.includes('\0')) && !Object.keys(command.env).some((name) => name.includes('=') || name === '');
}

interface Pending {
  /** The command's pid as the supervisor sees it (outside a sandbox, as everyone does). */
  pid?: number;
  onData(stream: 'stdout' | 'stderr', chunk: Buffer): void;
  resolve(end: SupervisedEnd): void;
  reject(error: Error): void;
}

/**
 * The client end of one supervisor: started at once (the caller starts it at its first
 * command), it runs one command at a time and queues the rest. It holds corral's event
 * loop only while a command runs. If it dies, every command waiting on it fails with an
 * InternalError naming what bubblewrap said, and so does every later one.
 */
export class Supervisor {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private queue: Promise<unknown> = Promise.resolve();
  private failure: InternalError | undefined;
  private stderrTail = '';
  private buffer: Buffer = Buffer.alloc(0);
  private closing = false;
  private readonly closed: Promise<void>;

  /**
   * `argv`: bubblewrap's, ending with supervisorArgv(), or that argv alone. `what` names
   * the sandbox in errors (`setup`, `commands`). `killable`: a supervisor outside any
   * sandbox, which a command can kill like any process of its user; its death is then that
   * command's (killed by SIGKILL, what it started ended here), not the run's failure.
   */
  constructor(
    argv: string[],
    private readonly what: string,
    private readonly killable = false,
  ) {
    const [file, ...args] = argv;
    // Its own process group: a Ctrl-C in the terminal reaches corral, which decides.
    this.child = spawn(file!, args, { cwd: '/', env: {}, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.child.stdin!.on('error', () => undefined);
    this.child.stdout!.on('data', (chunk: Buffer) => this.read(chunk));
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_KEPT);
    });
    let startError: string | undefined;
    this.child.once('error', (error) => {
      startError = error.message;
    });
    this.closed = new Promise((resolve) => {
      this.child.once('close', (code: number | null, signal: NodeJS.Signals | null) => {
        if (!this.closing || this.pending.size > 0) {
          const how = startError ?? (signal ? `killed by ${signal}` : `exit ${code}`);
          const said = this.stderrTail.trim().split('\n').filter((line) => line.trim() !== '').pop();
          if (this.killable) return resolve(this.died(`the run's process supervisor ended unexpectedly (${how}${said ? `: ${said}` : ''})`));
          this.fail(`the sandbox of the run's ${this.what} (bubblewrap with its supervisor) ended unexpectedly (${how}${said ? `: ${said}` : ''})`);
        }
        resolve();
      });
    });
    this.setHeld(false);
  }

  /** Runs `command` once those before it have ended; its output goes to `onData` as it comes. */
  run(command: SupervisedCommand, onData: Pending['onData']): SupervisedRun {
    const id = this.nextId++;
    let killed = false;
    let started = false;
    let graceTimer: NodeJS.Timeout | undefined;
    const done = this.queue.then(
      () =>
        new Promise<SupervisedEnd>((resolve, reject) => {
          if (this.failure) return this.killable ? resolve({ kind: 'error', message: this.failure.message }) : reject(this.failure);
          if (killed) return resolve({ kind: 'killed' });
          this.pending.set(id, { onData, resolve, reject });
          started = true;
          this.setHeld(true);
          this.send('C', id, encodeCommand(command));
        }),
    );
    const settled = done.finally(() => clearTimeout(graceTimer));
    this.queue = settled.catch(() => undefined);
    return {
      done: settled,
      kill: () => {
        if (killed) return;
        killed = true;
        if (!started || !this.pending.has(id)) return;
        this.send('K', id, Buffer.alloc(0));
        graceTimer = setTimeout(() => {
          if (!this.pending.has(id)) return;
          // Unconfined, it is ended and its command reported killed (died()); the next command gets a new one.
          if (this.killable) return this.killSandbox();
          this.fail(`the sandbox of the run's ${this.what} did not end a command within ${KILL_GRACE_MS / 1000}s of being told to`);
          this.killSandbox();
        }, KILL_GRACE_MS);
      },
    };
  }

  /** Ends the sandbox: the supervisor kills whatever is left and exits. Never throws. */
  async close(): Promise<void> {
    this.closing = true;
    this.child.stdin!.end();
    const timer = setTimeout(() => this.killSandbox(), CLOSE_GRACE_MS);
    try {
      await this.closed;
    } finally {
      clearTimeout(timer);
    }
  }

  /** bubblewrap's pid (outside the sandbox), while it runs. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Outside any sandbox (a child subreaper): a command killed by a signal is reported as spawn() reports it. */
  get unconfined(): boolean {
    return this.killable;
  }

  /** Whether it has failed (then every command fails, or for an unconfined one, gets a new supervisor). */
  get broken(): boolean {
    return this.failure !== undefined;
  }

  private killSandbox(): void {
    try {
      // bwrap leads its group; everything inside dies with it (--die-with-parent).
      if (this.child.pid !== undefined) process.kill(-this.child.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }

  /**
   * A killable supervisor is gone: the command it ran goes the way it would have (its
   * process group killed; what it moved out of that group went to init with the
   * supervisor), reported as killed by SIGKILL. Later commands get `broken` and a new one.
   */
  private died(message: string): void {
    this.failure ??= new InternalError(message);
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      // A command it never started did not run: said as a failure to start, with why.
      if (pending.pid === undefined) {
        pending.resolve({ kind: 'error', message });
        continue;
      }
      try {
        process.kill(-pending.pid, 'SIGKILL');
      } catch {
        // Gone with it.
      }
      pending.resolve({ kind: 'signal', signal: 9 });
    }
    this.setHeld(false);
  }

  private fail(message: string): void {
    this.failure ??= new InternalError(message);
    for (const [id, pending] of this.pending) {
      this.pending.delete(id);
      pending.reject(this.failure);
    }
    this.setHeld(false);
  }

  private send(type: string, id: number, body: Buffer): void {
    const header = Buffer.alloc(HEADER_BYTES);
    header.write(type, 0, 'latin1');
    header.writeUInt32BE(id, 1);
    header.writeUInt32BE(body.length, 5);
    this.child.stdin!.write(Buffer.concat([header, body]));
  }

  private read(chunk: Buffer): void {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    while (this.buffer.length >= HEADER_BYTES) {
      const length = this.buffer.readUInt32BE(5);
      if (this.buffer.length < HEADER_BYTES + length) break;
      const type = String.fromCharCode(this.buffer[0]!);
      const id = this.buffer.readUInt32BE(1);
      const body = this.buffer.subarray(HEADER_BYTES, HEADER_BYTES + length);
      this.buffer = this.buffer.subarray(HEADER_BYTES + length);
      this.frame(type, id, body);
    }
  }

  private frame(type: string, id: number, body: Buffer): void {
    const pending = this.pending.get(id);
    if (type === 'R' || pending === undefined) return;
    if (type === 'O' || type === 'E') return pending.onData(type === 'O' ? 'stdout' : 'stderr', Buffer.from(body));
    if (type === 'S') {
      pending.pid = Number(body.toString('latin1'));
      return;
    }
    if (type !== 'X') return;
    this.pending.delete(id);
    if (this.pending.size === 0) this.setHeld(false);
    const text = body.toString('utf8');
    const [word, rest = ''] = text.split(/ (.*)/s);
    if (word === 'exit') pending.resolve({ kind: 'exit', code: Number(rest) });
    else if (word === 'signal') pending.resolve({ kind: 'signal', signal: Number(rest) });
    else if (word === 'killed') pending.resolve({ kind: 'killed' });
    else if (word === 'error') pending.resolve({ kind: 'error', message: rest });
    else pending.reject(new InternalError(`the sandbox of the run's ${this.what} answered \`${text}\` to a command`));
  }

  /** Whether the supervisor and its pipes keep corral's event loop alive (only while a command runs). */
  private setHeld(held: boolean): void {
    for (const handle of [this.child, this.child.stdin, this.child.stdout, this.child.stderr]) {
      const ref = handle as unknown as { ref?: () => void; unref?: () => void } | null;
      if (held) ref?.ref?.();
      else ref?.unref?.();
    }
  }
}

/** cwd, argc, the argv, then NAME=value entries: each a 32-bit length, then its bytes. */
function encodeCommand(command: SupervisedCommand): Buffer {
  const fields = [command.cwd, String(command.argv.length), ...command.argv, ...Object.entries(command.env).map(([name, value]) => `${name}=${value}`)];
  return Buffer.concat(
    fields.flatMap((field) => {
      const bytes = Buffer.from(field, 'utf8');
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length, 0);
      return [length, bytes];
    }),
  );
}
