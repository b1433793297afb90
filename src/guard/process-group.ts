import type { CallFacts } from './facts.js';

/** Programs whose whole purpose is to outlive or leave the command that starts them. */
const DETACHERS = new Set(['setsid', 'nohup', 'disown', 'daemon', 'daemonize', 'start-stop-daemon', 'at', 'batch', 'systemd-run', 'screen', 'tmux', 'dtach', 'abduco']);

/**
 * Whether everything a Bash call starts stays in its process group, so killing the group
 * when it ends leaves nothing behind: every command is one the guard knows (they read,
 * list and write paths, and run only what is judged as a command of its own), none is
 * made to detach, and nothing is left unanalysed. Anything else (a check, an interpreter,
 * an unknown program) may call setsid, and runs under a child subreaper without a sandbox.
 */
export function staysInProcessGroup(facts: CallFacts): boolean {
  if (facts.tool !== 'Bash' || facts.problems.length > 0) return false;
  return facts.commands.every((command) => !command.check && command.unknownArgs.length === 0 && !DETACHERS.has(command.name) && (command.effects.known || (command.effects.wrapper && command.effects.why === undefined)));
}
