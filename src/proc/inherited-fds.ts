import { closeSync, readdirSync, readFileSync } from 'node:fs';

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
// one that is not came from outside; /proc/self/fdinfo shows the flag in `flags`. The IPC
// channel of a Node parent (child_process.fork) is the one inherited descriptor Node uses
// itself, and stays. (No input or output of corral can be a descriptor: a ticket must be
// a .yaml, .yml or .md file, and reports are written by renaming a file into place.)

/** O_CLOEXEC as /proc/<pid>/fdinfo shows it (octal), on the architectures where Linux uses the generic value. */
const O_CLOEXEC = 0o2000000;
const GENERIC_FLAGS: readonly string[] = ['x64', 'ia32', 'arm', 'arm64', 'riscv64', 'loong64', 'ppc64', 's390x'];

/** The descriptor of the IPC channel a Node parent opened for this process, if any. */
function channelFd(): number | undefined {
  const channel = (process as { channel?: { fd?: number } }).channel;
  return typeof channel?.fd === 'number' ? channel.fd : undefined;
}

/**
 * Closes every descriptor above 2 that this process inherited (not close-on-exec), but
 * the IPC channel, and returns their numbers. Where /proc cannot be read, or the flag's
 * value is not known, it closes none.
 */
export function closeInheritedDescriptors(): number[] {
  if (!GENERIC_FLAGS.includes(process.arch)) return [];
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    return [];
  }
  const kept = channelFd();
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2 || fd === kept) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8');
    } catch {
      // The listing's own descriptor, closed once it was read.
      continue;
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    if (flags === null || (parseInt(flags[1]!, 8) & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile.
    }
  }
  return closed;
}
