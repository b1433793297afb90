import { describe, expect, it } from 'vitest';
import { dryRunGuard } from '../../src/run/dry-run.js';
import { staysInProcessGroup } from '../../src/guard/process-group.js';
import { repoWithFiles } from '../support/repo.js';
import { judgeCall } from '../../src/run/call-pipeline.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', XDG_CONFIG_HOME: '/nonexistent' };

// Without a sandbox, a call runs under a child subreaper unless all it starts stays in its
// process group, which the group kill ends: the guard must be sure of every command.
describe('what a Bash call starts stays in its process group', () => {
  it.each(['true', 'ls -la src', 'cat src/a.js | grep a | sort', 'git status && git log --oneline', 'sleep 1 &', 'timeout 5 cat src/a.js', 'find src -name "*.js" -exec cat {} \\;'])('%s: yes', async (command) => {
    const guard = await dryRunGuard(undefined, repoWithFiles({ 'src/a.js': 'a\n' }), ENV, 'none');
    expect(staysInProcessGroup((await judgeCall(guard, 'Bash', { command })).verdict.facts)).toBe(true);
  });

  it.each(['setsid sleep 1000 &', 'nohup sleep 1000 &', 'sleep 1000 & disown', 'node -e 1', 'bash src/a.js', 'npm test', 'make', 'eval "$X"', 'cat $F', 'screen -dm sleep 9'])('%s: no, it may detach or run code', async (command) => {
    const guard = await dryRunGuard(undefined, repoWithFiles({ 'src/a.js': 'a\n' }), ENV, 'none');
    expect(staysInProcessGroup((await judgeCall(guard, 'Bash', { command })).verdict.facts)).toBe(false);
  });
});
