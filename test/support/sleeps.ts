import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

// Processes a test starts and then looks for by their command line, from outside whatever
// ran them: a `sleep` with a count no other process uses names its own.

/** Host pids of the processes `sleep <seconds>`. */
export function sleepsOf(seconds: string): number[] {
  return execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && m[2] === `sleep ${seconds}`)
    .map((m) => Number(m[1]));
}

/** A count of seconds no other process uses. */
export const uniqueSleep = (): string => `1000.${Math.floor(Math.random() * 1e9)}`;

/** A sleep left each way a command can leave one: in its group, setsid, setsid -f, a double fork, nohup and disown. */
export const DAEMONS = (token: string): string =>
  [`sleep ${token}1 &`, `setsid sleep ${token}2 &`, `setsid -f sleep ${token}3`, `( setsid sleep ${token}4 & ) &`, `nohup sleep ${token}5 >/dev/null 2>&1 & disown`].join('\n');

/** Host pids of the sleeps DAEMONS(token) left. */
export const daemonSleeps = (token: string): number[] => [1, 2, 3, 4, 5].flatMap((n) => sleepsOf(`${token}${n}`));

/** The processes whose parent is `parent`, from /proc: pid, command name and state (R, S, Z…). */
export function childrenOf(parent: number): { pid: number; comm: string; state: string }[] {
  return readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      return [];
    }
    const close = stat.lastIndexOf(')');
    const [state, ppid] = stat.slice(close + 2).split(' ');
    return Number(ppid) === parent ? [{ pid: Number(entry), comm: stat.slice(stat.indexOf('(') + 1, close), state: state! }] : [];
  });
}
