// Every rule corral decides by itself, in one place: the id a decision, the trace and
// the docs name, and what the rule stands for. A rule id anywhere else in the code is
// typed against this list, so a misspelt one does not compile.

export const BUILT_IN_RULES = {
  'baseline.secrets': 'no secret (.env files but not templates such as .env.example, keys, cloud and package-registry credentials, a process environment) is read by any route',
  'baseline.write-outside': 'nothing is written outside the worktree except the run\'s private temp dir',
  'baseline.git-metadata': 'nothing is written into a .git directory or the worktree\'s git metadata, and git config is never changed',
  'baseline.git-owned': 'the harness owns git: no push, fetch, reset --hard, clean, branch switching or ref changes, worktrees, remotes, tags, stash, or per-call git config',
  'baseline.privilege': 'no privilege changes: sudo, doas, su, chroot, set-user-id bits',
  'baseline.recursive-permissions': 'no recursive chmod, chown or chgrp',
  'baseline.device-write': 'no writes to devices, no disk or mount tools',
  'baseline.broad-kill': 'no killing of every process, a process group, init, or processes by name',
  'baseline.download-exec': 'nothing downloaded is run: a download and an interpreter in one call',
  'baseline.unanalysable': 'what cannot be analysed (eval, a computed command name or path, a parse error, an unknown construct) is asked, never allowed',
  'baseline.unknown-tool': 'a tool corral does not know is denied',
  'baseline.guard-error': 'a call the guard fails to decide (an internal error) is denied',
  'baseline.hook-script': 'a hook script corral runs as trusted code is never written by the agent',
  'baseline.read-only': 'allows a call that only reads and lists inside the worktree',
  'baseline.fenced-write': "allows a call that only reads inside the worktree and writes inside the ticket's allow globs",
  'fence.forbidden': "a write inside the ticket's forbid globs is denied when it is made",
  'fence.outside-allow': "a write outside the ticket's allow globs is denied when it is made",
  'sandbox.contained': 'allows inside the sandbox what it contains: what the guard cannot see, run with no network and no secrets',
  'ticket.checks': "allows the ticket's own check commands",
  'tool.invalid-call': "a call that does not fit its tool's input is denied, and the model is told what to fix",
  'hook.PreToolUse': 'a PreToolUse hook blocked the call (exit 2) or asked about it',
  'run.interrupted': 'a call reached while the run is being interrupted is denied',
  default: 'the default effect decides a call no rule covers',
} as const;

export type BuiltInRule = keyof typeof BUILT_IN_RULES;
