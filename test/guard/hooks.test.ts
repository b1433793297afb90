import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { runHooks, type HookSite } from '../../src/guard/hooks.js';
import { hooksSchema, type HookEvent, type HooksConfig } from '../../src/policy/hooks-schema.js';
import { isAlive, makeTempDir } from '../tools/helpers.js';

const guardScript = fileURLToPath(new URL('../../fixtures/hooks/guard-tool.sh', import.meta.url));

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => ({ dir, cleanup } = await makeTempDir()));
afterEach(() => cleanup());

function site(extra: Partial<HookSite> = {}): HookSite {
  return {
    sessionId: 'run-42',
    transcriptPath: path.join(dir, 'trace.jsonl'),
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
    signal: new AbortController().signal,
    ...extra,
  };
}

/** One matcher group per event with these commands, parsed like a config file would be. */
function config(event: HookEvent, commands: string[], extra: { matcher?: string; timeout?: number } = {}): HooksConfig {
  const hooks = commands.map((command) => ({ type: 'command', command, ...(extra.timeout ? { timeout: extra.timeout } : {}) }));
  return hooksSchema.parse({ [event]: [{ ...(extra.matcher === undefined ? {} : { matcher: extra.matcher }), hooks }] });
}

const bash = (command: string) => ({ tool_name: 'Bash', tool_input: { command } });

/** Live processes whose process group is `pgid`. */
async function liveProcessesInGroup(pgid: number): Promise<number[]> {
  const ps = await execa('ps', ['-eo', 'pid=,pgid=,stat='], { reject: false });
  return ps.stdout
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, group, stat]) => Number(group) === pgid && !stat?.startsWith('Z'))
    .map(([pid]) => Number(pid));
}

describe('runHooks: the protocol', () => {
  test('a PreToolUse hook gets the event as JSON on stdin, runs in the worktree with the tool env plus the project dir', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', 'sk-ant-fake-key-from-the-test');
    try {
      const hooks = config('PreToolUse', ['cat > stdin.json; env > env.txt; pwd > pwd.txt']);
      const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', CORRAL_PROBE: 'yes' };
      const outcome = await runHooks(hooks, 'PreToolUse', { tool_name: 'Edit', tool_input: { file_path: 'src/a.ts' }, tool_use_id: 'toolu_01' }, site({ env }));
      expect(outcome).toMatchObject({ blocked: false, reason: '' });
      expect(outcome.runs).toHaveLength(1);
      expect(outcome.runs[0]).toMatchObject({ exitCode: 0, timedOut: false, stderr: '', stdout: '' });

      expect(JSON.parse(await readFile(path.join(dir, 'stdin.json'), 'utf8'))).toEqual({
        session_id: 'run-42',
        transcript_path: path.join(dir, 'trace.jsonl'),
        cwd: dir,
        permission_mode: 'default',
        hook_event_name: 'PreToolUse',
        tool_name: 'Edit',
        // Absolute, as Claude Code hands it, whatever the model wrote.
        tool_input: { file_path: path.join(dir, 'src/a.ts') },
        tool_use_id: 'toolu_01',
      });
      expect((await readFile(path.join(dir, 'pwd.txt'), 'utf8')).trim()).toBe(dir);
      const envText = await readFile(path.join(dir, 'env.txt'), 'utf8');
      expect(envText).toContain(`CLAUDE_PROJECT_DIR=${dir}\n`);
      expect(envText).toContain(`CORRAL_PROJECT_DIR=${dir}\n`);
      expect(envText).not.toContain('sk-ant-fake');
      const names = envText.trim().split('\n').map((line) => line.split('=')[0]);
      // bash itself sets PWD, SHLVL and _; nothing else may appear.
      expect(new Set(names)).toEqual(new Set(['PATH', 'CORRAL_PROBE', 'CLAUDE_PROJECT_DIR', 'CORRAL_PROJECT_DIR', 'PWD', 'SHLVL', '_']));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('a PostToolUse hook also gets the tool response', async () => {
    const hooks = config('PostToolUse', ['cat > stdin.json']);
    const payload = { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: { output: 'a.ts\n', is_error: false } };
    await runHooks(hooks, 'PostToolUse', payload, site());
    expect(JSON.parse(await readFile(path.join(dir, 'stdin.json'), 'utf8'))).toMatchObject({
      hook_event_name: 'PostToolUse',
      ...payload,
    });
  });

  test('a Stop hook gets stop_hook_active and no tool fields; its matcher is ignored', async () => {
    const hooks = config('Stop', ['cat > stdin.json'], { matcher: 'Bash' });
    await runHooks(hooks, 'Stop', { stop_hook_active: true }, site());
    const input = JSON.parse(await readFile(path.join(dir, 'stdin.json'), 'utf8'));
    expect(input).toEqual({
      session_id: 'run-42',
      transcript_path: path.join(dir, 'trace.jsonl'),
      cwd: dir,
      permission_mode: 'default',
      hook_event_name: 'Stop',
      stop_hook_active: true,
    });
    await runHooks(hooks, 'Stop', {}, site());
    expect(JSON.parse(await readFile(path.join(dir, 'stdin.json'), 'utf8'))).toMatchObject({ stop_hook_active: false });
  });

  test('exit 0 lets the call go on; every hook runs, in order', async () => {
    const hooks = config('PreToolUse', ['echo one >> log', 'echo two >> log; echo fine']);
    const outcome = await runHooks(hooks, 'PreToolUse', bash('ls'), site());
    expect(outcome.blocked).toBe(false);
    expect(outcome.runs.map((run) => [run.exitCode, run.stdout])).toEqual([
      [0, ''],
      [0, 'fine\n'],
    ]);
    expect(await readFile(path.join(dir, 'log'), 'utf8')).toBe('one\ntwo\n');
  });

  test('exit 2 blocks with stderr as the reason, and later hooks do not run', async () => {
    const hooks = config('PreToolUse', ['echo one >> log', 'echo "  no ls today  " >&2; exit 2', 'echo three >> log']);
    const outcome = await runHooks(hooks, 'PreToolUse', bash('ls'), site());
    expect(outcome).toMatchObject({ blocked: true, reason: 'no ls today' });
    expect(outcome.runs).toHaveLength(2);
    expect(outcome.runs[1]).toMatchObject({ command: 'echo "  no ls today  " >&2; exit 2', exitCode: 2, stderr: '  no ls today  \n' });
    expect(await readFile(path.join(dir, 'log'), 'utf8')).toBe('one\n');
  });

  test('exit 2 without a message still gives a reason naming the hook', async () => {
    const outcome = await runHooks(config('Stop', ['exit 2']), 'Stop', {}, site());
    expect(outcome.blocked).toBe(true);
    expect(outcome.reason).toContain('`exit 2`');
    expect(outcome.reason).toContain('code 2');
  });

  test('any other exit code is recorded but does not block', async () => {
    const hooks = config('PreToolUse', ['echo broken >&2; exit 1', 'echo two >> log']);
    const outcome = await runHooks(hooks, 'PreToolUse', bash('ls'), site());
    expect(outcome).toMatchObject({ blocked: false, reason: '' });
    expect(outcome.runs.map((run) => [run.exitCode, run.stderr])).toEqual([
      [1, 'broken\n'],
      [0, ''],
    ]);
  });

  test('a PreToolUse hook that cannot start is recorded and blocks the call (fail closed)', async () => {
    const outcome = await runHooks(config('PreToolUse', ['true']), 'PreToolUse', bash('ls'), site({ cwd: path.join(dir, 'missing') }));
    expect(outcome.blocked).toBe(true);
    expect(outcome.reason).toContain('could not start');
    expect(outcome.runs[0]).toMatchObject({ exitCode: null, timedOut: false });
    expect(outcome.runs[0]?.stderr).toContain('failed to start');
  });

  test('a PreToolUse hook the shell cannot find (127) or run (126) blocks; a PostToolUse one does not', async () => {
    for (const command of ['./no-such-guard.sh', 'corral-test-no-such-program']) {
      const outcome = await runHooks(config('PreToolUse', [command]), 'PreToolUse', bash('ls'), site());
      expect(outcome).toMatchObject({ blocked: true, runs: [{ exitCode: 127 }] });
    }
    const post = await runHooks(config('PostToolUse', ['./no-such-guard.sh']), 'PostToolUse', bash('ls'), site());
    expect(post.blocked).toBe(false);
  });

  test('no config or no hooks for the event: nothing runs', async () => {
    expect(await runHooks(undefined, 'PreToolUse', bash('ls'), site())).toEqual({ blocked: false, reason: '', runs: [] });
    expect(await runHooks(config('Stop', ['exit 2']), 'PreToolUse', bash('ls'), site())).toEqual({ blocked: false, reason: '', runs: [] });
  });
});

describe('runHooks: answers in JSON on stdout', () => {
  const answer = (json: string) => `cat >/dev/null; echo '${json}'`;

  test('a deny or block answer blocks with its reason; ask tightens; allow never loosens anything', async () => {
    const deny = await runHooks(config('PreToolUse', [answer('{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}')]), 'PreToolUse', bash('ls'), site());
    expect(deny).toMatchObject({ blocked: true, reason: 'not here' });
    const block = await runHooks(config('Stop', [answer('{"decision":"block","reason":"run the type check first"}')]), 'Stop', { stop_hook_active: false }, site());
    expect(block).toMatchObject({ blocked: true, reason: 'run the type check first' });
    const ask = await runHooks(config('PreToolUse', [answer('{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check with a person"}}')]), 'PreToolUse', bash('ls'), site());
    expect(ask).toMatchObject({ blocked: false, ask: 'check with a person' });
    const allow = await runHooks(config('PreToolUse', [answer('{"hookSpecificOutput":{"permissionDecision":"allow"}}'), answer('{"decision":"approve"}')]), 'PreToolUse', bash('ls'), site());
    expect(allow).toEqual(expect.objectContaining({ blocked: false }));
    expect(allow.ask).toBeUndefined();
    const text = await runHooks(config('PreToolUse', [answer('all good')]), 'PreToolUse', bash('ls'), site());
    expect(text.blocked).toBe(false);
  });
});

describe('runHooks: Claude Code parity', () => {
  const answer = (json: string) => `cat >/dev/null; echo '${json}'`;

  test('file_path and path reach the hook absolute; absolute ones and other fields stay as given', async () => {
    const hooks = config('PreToolUse', ['cat > stdin.json']);
    await runHooks(hooks, 'PreToolUse', { tool_name: 'Grep', tool_input: { pattern: 'x', path: 'src/../lib', glob: '*.ts' } }, site({ permissionMode: 'dontAsk' }));
    const grep = JSON.parse(await readFile(path.join(dir, 'stdin.json'), 'utf8'));
    expect(grep).toMatchObject({ permission_mode: 'dontAsk', tool_input: { pattern: 'x', path: path.join(dir, 'lib'), glob: '*.ts' } });
    await runHooks(hooks, 'PreToolUse', { tool_name: 'Read', tool_input: { file_path: '/etc/hosts' } }, site());
    expect(JSON.parse(await readFile(path.join(dir, 'stdin.json'), 'utf8')).tool_input).toEqual({ file_path: '/etc/hosts' });
  });

  test('updatedInput is handed on, and the next hook sees it; additionalContext is collected; continue: false halts with its stopReason', async () => {
    const rewrite = answer('{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"rg x"},"additionalContext":"use rg here"}}');
    const outcome = await runHooks(config('PreToolUse', [rewrite, 'jq -r .tool_input.command > seen.txt']), 'PreToolUse', bash('grep x'), site());
    expect(outcome).toMatchObject({ blocked: false, updatedInput: { command: 'rg x' }, context: ['use rg here'] });
    expect((await readFile(path.join(dir, 'seen.txt'), 'utf8')).trim()).toBe('rg x');
    const halt = await runHooks(config('PostToolUse', [answer('{"continue":false,"stopReason":"the build is broken; stop"}'), 'touch never-ran']), 'PostToolUse', bash('ls'), site());
    expect(halt).toMatchObject({ blocked: true, halt: 'the build is broken; stop', reason: 'the build is broken; stop' });
    expect(halt.runs).toHaveLength(1);
  });

  test('a hook gets the variables it names from the host environment, and nothing else of it', async () => {
    const hooks = hooksSchema.parse({ PreToolUse: [{ hooks: [{ type: 'command', command: 'echo "[$HOOK_TOKEN][$OTHER_TOKEN]" > env.txt', env_from_host: ['HOOK_TOKEN', 'MISSING'] }] }] });
    await runHooks(hooks, 'PreToolUse', bash('ls'), site({ hostEnv: { HOOK_TOKEN: 'ghp_hook-only', OTHER_TOKEN: 'not-for-hooks' } }));
    expect((await readFile(path.join(dir, 'env.txt'), 'utf8')).trim()).toBe('[ghp_hook-only][]');
    expect(() => hooksSchema.parse({ PreToolUse: [{ hooks: [{ type: 'command', command: 'true', env_from_host: ['NOT-A-NAME'] }] }] })).toThrow(/not an environment variable name/);
  });
});

describe('runHooks: matchers', () => {
  const ran = async (matcher: string | undefined, tool: string): Promise<boolean> =>
    (await runHooks(config('PreToolUse', ['true'], { matcher }), 'PreToolUse', { tool_name: tool, tool_input: {} }, site())).runs.length === 1;

  test('a regex over the tool name: `Read|Edit` matches Edit, not Bash', async () => {
    expect(await ran('Read|Edit', 'Edit')).toBe(true);
    expect(await ran('Read|Edit', 'Bash')).toBe(false);
  });

  test('empty, `*` or absent match every tool', async () => {
    for (const matcher of ['', '*', undefined]) expect(await ran(matcher, 'Bash')).toBe(true);
  });

  test('anchored to the whole name: `Bash` does not match `BashOutput`', async () => {
    expect(await ran('Bash', 'BashOutput')).toBe(false);
    expect(await ran('Bash', 'Bash')).toBe(true);
    expect(await ran('Bash.*', 'BashOutput')).toBe(true);
  });
});

describe('runHooks: kills', () => {
  test('a hook past its timeout is killed with everything it started, and the next one runs', async () => {
    const hooks = config('PreToolUse', ['echo $$; sleep 1000 & echo $!; sleep 1000', 'echo next >> log'], { timeout: 1 });
    const outcome = await runHooks(hooks, 'PreToolUse', bash('ls'), site());
    expect(outcome.blocked).toBe(false);
    expect(outcome.runs[0]).toMatchObject({ exitCode: null, timedOut: true });
    const [group, grandchild] = outcome.runs[0]!.stdout.trim().split('\n').map(Number);
    expect(group).toBeGreaterThan(0);
    expect(grandchild).toBeGreaterThan(0);
    await vi.waitFor(async () => {
      expect(await isAlive(grandchild!)).toBe(false);
      expect(await liveProcessesInGroup(group!)).toEqual([]);
    });
    expect(await readFile(path.join(dir, 'log'), 'utf8')).toBe('next\n');
  });

  test('the run interrupt kills a running hook and starts no more', async () => {
    const controller = new AbortController();
    const pidFile = path.join(dir, 'pid');
    const hooks = config('PreToolUse', [`sleep 1000 & echo $! > ${pidFile}; sleep 1000`, 'echo next >> log']);
    const running = runHooks(hooks, 'PreToolUse', bash('ls'), site({ signal: controller.signal }));
    const grandchild = await vi.waitFor(async () => {
      const text = await readFile(pidFile, 'utf8');
      expect(text).toMatch(/^\d+\n$/);
      return Number(text);
    });
    controller.abort();
    const outcome = await running;
    expect(outcome.blocked).toBe(false);
    expect(outcome.runs).toHaveLength(1);
    expect(outcome.runs[0]).toMatchObject({ exitCode: null, timedOut: false });
    await vi.waitFor(async () => expect(await isAlive(grandchild)).toBe(false));
    await expect(readFile(path.join(dir, 'log'))).rejects.toThrow();
  });
});

describe('hooksSchema', () => {
  const issues = (value: unknown): string[] => {
    const result = hooksSchema.safeParse(value);
    expect(result.success).toBe(false);
    return result.error!.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
  };

  test('takes the settings shape of the other agents', () => {
    const value = {
      PreToolUse: [{ matcher: 'Read|Edit|Write|Bash', hooks: [{ type: 'command', command: './scripts/guard.sh', timeout: 30 }] }],
      PostToolUse: [{ hooks: [{ type: 'command', command: 'npx prettier --check .' }] }],
      Stop: [{ matcher: '', hooks: [{ type: 'command', command: 'npm test' }] }],
    };
    expect(hooksSchema.parse(value)).toEqual(value);
  });

  test('a matcher that is not a regex is an issue naming the regex error', () => {
    const [problem, ...rest] = issues({ PreToolUse: [{ matcher: 'Edit(', hooks: [] }] });
    expect(rest).toEqual([]);
    expect(problem).toMatch(/^PreToolUse\.0\.matcher: matcher is not a valid regular expression: .*Unterminated group/);
    // Valid once wrapped in ^(?:…)$, but not on its own.
    expect(issues({ Stop: [{ matcher: 'a)(b', hooks: [] }] })).toHaveLength(1);
  });

  test('unknown keys are rejected at every level', () => {
    expect(issues({ Notification: [] })[0]).toContain('Notification');
    expect(issues({ PreToolUse: [{ matchers: 'Bash', hooks: [] }] })[0]).toContain('matchers');
    expect(issues({ PreToolUse: [{ hooks: [{ type: 'command', command: 'x', timeout_ms: 5 }] }] })[0]).toContain('timeout_ms');
  });

  test('type must be command; timeout positive and at most 600; command not blank', () => {
    expect(issues({ Stop: [{ hooks: [{ type: 'prompt', command: 'x' }] }] })[0]).toMatch(/^Stop\.0\.hooks\.0\.type: /);
    expect(issues({ Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: 0 }] }] })[0]).toMatch(/timeout/);
    expect(issues({ Stop: [{ hooks: [{ type: 'command', command: 'x', timeout: 601 }] }] })[0]).toMatch(/timeout/);
    expect(issues({ Stop: [{ hooks: [{ type: 'command', command: '  ' }] }] })[0]).toContain('command is empty');
  });
});

describe('fixtures/hooks/guard-tool.sh through runHooks', () => {
  const guard = (): HooksConfig => config('PreToolUse', [`'${guardScript}'`], { matcher: 'Read|Edit|Write|Bash' });

  test.each([
    ['Read .env', { tool_name: 'Read', tool_input: { file_path: '.env' } }, /\.env/],
    ['Read an absolute .env.local', { tool_name: 'Read', tool_input: { file_path: '/srv/app/.env.local' } }, /\.env/],
    ['Edit ../outside.txt', { tool_name: 'Edit', tool_input: { file_path: '../outside.txt' } }, /outside the project/],
    ['Write /etc/hosts', { tool_name: 'Write', tool_input: { file_path: '/etc/hosts' } }, /outside the project/],
    ['Bash cat .env', bash('cat .env'), /cat \.env/],
    ['Bash source .env', bash('source .env'), /\.env/],
    ['Bash wc -l < .env', bash('wc -l < .env'), /\.env/],
    ['Bash echo $(cat .env)', bash('echo "$(cat .env)"'), /\.env/],
    ['Bash git push origin main', bash('git push origin main'), /main/],
    ['Bash git push -f origin HEAD:main', bash('git push -f origin HEAD:main'), /main/],
  ])('blocks %s', async (_name, payload, reason) => {
    const outcome = await runHooks(guard(), 'PreToolUse', payload, site());
    expect(outcome.runs[0]?.exitCode).toBe(2);
    expect(outcome.blocked).toBe(true);
    expect(outcome.reason).toMatch(reason);
  });

  test.each([
    ['Read .env.example', { tool_name: 'Read', tool_input: { file_path: '.env.example' } }],
    ['Bash git commit -m "document the .env setup"', bash('git commit -m "document the .env setup"')],
    ['Bash git commit -m \'cat .env is blocked now\'', bash("git commit -m 'cat .env is blocked now'")],
    ['Bash echo "see .env.example"', bash('echo "see .env.example"')],
    ['Edit src/a.ts', { tool_name: 'Edit', tool_input: { file_path: 'src/a.ts' } }],
    ['Write an absolute path inside the project', { tool_name: 'Write', tool_input: { file_path: '/PROJECT/src/b.ts' } }],
    ['Bash git push origin feature', bash('git push origin feature')],
    ['Bash git push origin main:feature', bash('git push origin main:feature')],
  ])('lets through %s', async (_name, payload) => {
    const input = JSON.parse(JSON.stringify(payload).replaceAll('/PROJECT', dir)) as typeof payload;
    const outcome = await runHooks(guard(), 'PreToolUse', input, site());
    expect(outcome.runs[0]).toMatchObject({ exitCode: 0, stderr: '', stdout: '' });
    expect(outcome.blocked).toBe(false);
  });
});
