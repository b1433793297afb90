import { describe, expect, it } from 'vitest';
import { findSubreaper } from '../../src/proc/subreaper.js';
import { Supervisor, supervisorArgv, type SupervisedEnd } from '../../src/proc/supervisor.js';

// The supervisor learns that a command's process ended from its pidfd where Linux has
// pidfd_open, not only from SIGCHLD: perl runs a signal handler only between its own
// operations, so a SIGCHLD that came just before the supervisor went to wait in select()
// woke nobody, and that command (a check, a step) hung until its timeout. Here SIGCHLD is
// blocked for good, so every end the supervisor reports it learnt without the signal.

const reaper = await findSubreaper();
const skip = reaper.kind !== 'perl';

/** Starts the supervisor with SIGCHLD blocked (a blocked signal stays blocked across exec). */
function withSigchldBlocked(argv: string[]): string[] {
  const [perl] = argv;
  const blocker = 'use POSIX (); POSIX::sigprocmask(POSIX::SIG_BLOCK(), POSIX::SigSet->new(POSIX::SIGCHLD())) or die "sigprocmask: $!"; exec { $ARGV[0] } @ARGV or die "exec: $!"';
  return [perl!, '-e', blocker, '--', ...argv];
}

async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe.skipIf(skip)('a command whose end came with no SIGCHLD', () => {
  it('is reported when it ends, one after another, output and status whole', async () => {
    const supervisor = new Supervisor(withSigchldBlocked(supervisorArgv(reaper.kind === 'perl' ? reaper.program : 'perl', { reaper: true })), 'commands', true);
    try {
      for (let i = 0; i < 5; i++) {
        let output = '';
        // Its output ends before it does: nothing but its end is left to wake the supervisor.
        const run = supervisor.run({ argv: ['bash', '--norc', '-c', `echo round ${i}; exec >&- 2>&-; sleep 0.1; exit ${i}`], cwd: '/', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, (_stream, chunk) => (output += chunk.toString('utf8')));
        const end = await within<SupervisedEnd>(run.done, 10_000);
        expect(end).toEqual({ kind: 'exit', code: i });
        expect(output).toBe(`round ${i}\n`);
      }
    } finally {
      await supervisor.close();
    }
  });
});
