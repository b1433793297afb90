import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';

// A descriptor that whatever started corral left open (a CI runner's, a terminal's, a
// parent's pipe) passes into every process corral starts: Node hands its children all it
// has that is not close-on-exec, and so do bubblewrap and the agent CLIs. One open on a
// folder outside the sandbox reaches that folder's files from inside. So the CLI closes
// them as it starts, before anything is spawned: every command, hook, check and agent CLI
// then gets only stdin, stdout and stderr, whichever way it is started (the supervisor, a
// bubblewrap of its own, no sandbox). The supervisor closes its own too, for the same
// reason, in case anything else starts it.
//
// Which ones: those that are not close-on-exec. One that is never reaches a process corral
// starts, and what Node and libuv open all are (they open everything with O_CLOEXEC), so
// one that is not came from outside; /proc/self/fdinfo shows the flag in `flags`. Two
// things of this process's own are not close-on-exec either, and stay: the IPC channel of
// a Node parent, and the files V8 writes its logs to when told to (`--prof`, `--log-*`,
// `--perf-basic-prof`, given on the command line or in NODE_OPTIONS): V8 opens them with
// fopen, and would go on writing to whatever file took the number next. With such a flag
// nothing is closed (corral is being profiled by its own developer, not run by CI).

/** O_CLOEXEC as /proc/<pid>/fdinfo shows it (octal), where Linux uses the generic value; checked on a descriptor of our own first. */
const O_CLOEXEC = 0o2000000;
/** V8 flags that make it open log files of its own (`--no-…` turns one off, and is no match). */
const V8_LOG_FLAG = /(?:^|\s)--(?:prof|log|logfile|perf[-_](?:basic[-_])?prof)(?=[-_=\s]|$)/;

/** The descriptor of the IPC channel a Node parent opened for this process, if any. */
function channelFd(): number | undefined {
  const channel = (process as { channel?: { fd?: number } }).channel;
  return typeof channel?.fd === 'number' ? channel.fd : undefined;
}

/** The `flags` /proc/self/fdinfo shows for `fd`, or null when it cannot be read. */
function fdFlags(fd: number): number | null {
  let info: string;
  try {
    info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
  } catch {
    return null;
  }
  const flags = /^flags:\s*([0-7]+)$/m.exec(info);
  return flags === null ? null : parseInt(flags[1]!, 8);
}

/** Whether /proc/self/fdinfo shows the close-on-exec flag where we expect it: on a descriptor known to have it. */
function fdinfoShowsCloseOnExec(): boolean {
  let fd: number;
  try {
    fd = openSync('/dev/null', 'r');
  } catch {
    return false;
  }
  try {
    const flags = fdFlags(fd);
    return flags !== null && (flags & O_CLOEXEC) !== 0;
  } finally {
    closeSync(fd);
  }
}

/**
 * Closes every descriptor above 2 that this process inherited (not close-on-exec), but
 * the IPC channel, and returns their numbers. It closes none where /proc cannot be read,
 * where fdinfo does not show the flag as expected, or while V8 writes logs of its own.
 */
export function closeInheritedDescriptors(execArgv: readonly string[] = process.execArgv, nodeOptions: string = process.env.NODE_OPTIONS ?? ''): number[] {
  if (V8_LOG_FLAG.test(`${execArgv.join(' ')} ${nodeOptions}`)) return [];
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const kept = channelFd();
  const inherited = names.map(Number).filter((fd) => {
    if (!Number.isInteger(fd) || fd <= 2 || fd === kept) return false;
    // null: the listing's own descriptor, closed once it was read.
    const flags = fdFlags(fd);
    return flags !== null && (flags & O_CLOEXEC) === 0;
  });
  // Checked only when there is something to close: most starts have nothing.
  if (inherited.length === 0 || !fdinfoShowsCloseOnExec()) return [];
  const closed: number[] = [];
  for (const fd of inherited) {
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
