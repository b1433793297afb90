import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createGuard, type Guard } from '../../src/guard/guard.js';
import type { Decision } from '../../src/guard/decide.js';
import { patternMatches } from '../../src/guard/rules/patterns.js';
import type { PolicyLayer } from '../../src/policy/stack.js';
import { loadConditionLanguage } from '../../src/policy/conditions.js';
import { policySchema, type PolicyFile } from '../../src/policy/schema.js';
import type { PatternRule } from '../../src/policy/types.js';
import type { TicketCommand } from '../../src/ticket/types.js';
import { gitIn, tempDir } from '../support/repo.js';
import { judgeCall } from '../../src/run/call-pipeline.js';

const FILES: Record<string, string> = {
  '.env': 'API_KEY=sk-decide-test-not-a-real-key\n',
  '.env.example': 'API_KEY=\n',
  '.gitignore': '.env\n',
  'src/a.js': 'export const a = 1;\n',
  'migrations/1.sql': 'create table t (id int);\n',
};

const CHECKS: TicketCommand[] = [{ name: 'test', run: 'npm test', timeoutMs: 1000 }];
const TICKET_FILE = '/x/ticket.yaml';

let repo: string;
let home: string;
let tmp: string;

/** A real git repository with the files above (and `extra`), a symlink `out -> /etc`, all committed. */
function makeRepo(extra: Record<string, string> = {}): string {
  const dir = tempDir('corral-decide-');
  for (const [name, content] of Object.entries({ ...FILES, ...extra })) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  symlinkSync('/etc', path.join(dir, 'out'));
  gitIn(dir, ['init', '-q']);
  gitIn(dir, ['add', '-A']);
  gitIn(dir, ['commit', '-qm', 'decide fixtures']);
  return dir;
}

beforeAll(() => {
  repo = makeRepo();
  home = tempDir('corral-decide-home-');
  tmp = tempDir('corral-decide-tmp-');
});

/** A guard for the ticket (allow src/**, forbid src/gen/**, check `npm test`) with the ticket's own `policy` and the scopes above it. */
function guardFor(options: { policy?: PolicyFile; above?: PolicyLayer[]; worktree?: string } = {}): Guard {
  return createGuard({
    worktree: options.worktree ?? repo,
    tmpDir: tmp,
    env: { HOME: home, PATH: process.env.PATH! },
    ticket: {
      id: 'T-1',
      labels: ['db'],
      allow: ['src/**'],
      forbid: ['src/gen/**'],
      checks: CHECKS,
      // Validated as a ticket's policy block is, so a typo here fails loudly.
      policy: options.policy === undefined ? undefined : policySchema.parse(options.policy),
      file: TICKET_FILE,
    },
    ...(options.above ? { layers: options.above } : {}),
  });
}

async function bash(guard: Guard, command: string): Promise<Decision> {
  return (await judgeCall(guard, 'Bash', { command })).verdict.decision;
}

async function tool(guard: Guard, name: string, input: Record<string, unknown>): Promise<Decision> {
  return (await judgeCall(guard, name, input)).verdict.decision;
}

/** `{effect, rule}` of a decision, to compare compactly. */
function verdict(decision: Decision): { effect: string; rule: string } {
  return { effect: decision.effect, rule: decision.rule };
}

describe('how rules combine', () => {
  it('lets deny beat ask and ask beat allow, whichever scope each comes from', async () => {
    const guard = guardFor({
      above: [
        { scope: 'user', file: { allow: ['Bash(make:*)'] } },
        { scope: 'project', file: { ask: ['Bash(make:*)'] } },
      ],
      policy: { deny: ['Bash(make install)'] },
    });
    expect(await bash(guard, 'make')).toMatchObject({ effect: 'ask', rule: 'Bash(make:*)', scope: 'project' });
    expect(await bash(guard, 'make install')).toMatchObject({ effect: 'deny', rule: 'Bash(make install)', scope: 'ticket' });
  });

  it('allows by a user rule what no other scope asks about or denies', async () => {
    const guard = guardFor({ above: [{ scope: 'user', file: { allow: ['Bash(make:*)'] } }] });
    expect(await bash(guard, 'make build')).toMatchObject({ effect: 'allow', rule: 'Bash(make:*)', scope: 'user' });
  });

  it('reports the first rule of the deciding effect, scopes in order, with its id and scope', async () => {
    const guard = guardFor({
      above: [
        { scope: 'user', file: { deny: ['Bash(rm:*)'] } },
        { scope: 'project', file: { deny: ['Bash(rm -rf:*)'] } },
      ],
      policy: { deny: ['Bash(rm -rf src)'] },
    });
    expect(await bash(guard, 'rm -rf src')).toMatchObject({ effect: 'deny', rule: 'Bash(rm:*)', scope: 'user', reason: 'the user policy denies Bash(rm:*)' });
  });

  it('reports the first rule in file order within one scope, with the file it came from', async () => {
    const guard = guardFor({ policy: { deny: ['Bash(rm -rf:*)', 'Bash(rm:*)'] } });
    expect(await bash(guard, 'rm -rf src/lib')).toEqual({
      effect: 'deny',
      rule: 'Bash(rm -rf:*)',
      scope: 'ticket',
      reason: 'the ticket policy denies Bash(rm -rf:*)',
      source: TICKET_FILE,
    });
  });

  it('lets a baseline deny beat a ticket allow', async () => {
    const guard = guardFor({ policy: { allow: ['Read(./.env)', 'Bash(cat:*)', 'Bash(git push:*)'] } });
    expect(await bash(guard, 'cat .env')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets', scope: 'baseline' });
    expect(await tool(guard, 'Read', { file_path: '.env' })).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
    expect(await bash(guard, 'git push origin main')).toMatchObject({ effect: 'deny', rule: 'baseline.git-owned' });
  });
});

describe('pattern rules', () => {
  it('matches `Bash(git push:*)` through cd, git -C and a full path to git', async () => {
    const guard = guardFor({ policy: { deny: ['Bash(git push:*)'] } });
    const rule = guard.policy.rules.find((r): r is PatternRule => r.id === 'Bash(git push:*)')!;
    const matches = async (command: string): Promise<boolean> => patternMatches(rule, (await judgeCall(guard, 'Bash', { command })).verdict.facts, home, repo);
    expect(await matches('cd src && git -C .. push origin')).toBe(true);
    expect(await matches('/usr/bin/git push')).toBe(true);
    expect(await matches('git status')).toBe(false);
    expect(await matches('echo git push')).toBe(false);
    // The baseline denies a push anyway, and is reported first.
    expect(await bash(guard, '/usr/bin/git push')).toMatchObject({ effect: 'deny', rule: 'baseline.git-owned' });
  });

  it('decides by a git prefix rule through cd, git -C and a full path to git', async () => {
    const guard = guardFor({ policy: { deny: ['Bash(git log:*)'] } });
    expect(verdict(await bash(guard, 'cd src && git -C .. log --oneline'))).toEqual({ effect: 'deny', rule: 'Bash(git log:*)' });
    expect(verdict(await bash(guard, '/usr/bin/git log'))).toEqual({ effect: 'deny', rule: 'Bash(git log:*)' });
    expect(verdict(await bash(guard, 'git status'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('counts `find -delete` and `xargs rm` as rm for a `Bash(rm:*)` deny', async () => {
    const guard = guardFor({ policy: { deny: ['Bash(rm:*)'] } });
    expect(verdict(await bash(guard, 'find src/lib -delete'))).toEqual({ effect: 'deny', rule: 'Bash(rm:*)' });
    expect(verdict(await bash(guard, 'echo src/a.js | xargs rm'))).toEqual({ effect: 'deny', rule: 'Bash(rm:*)' });
    expect(verdict(await bash(guard, 'find src/lib -exec rm {} +'))).toEqual({ effect: 'deny', rule: 'Bash(rm:*)' });
    expect(verdict(await bash(guard, 'find src -name "*.js"'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('lets a deny pattern match an argument not known before the call runs', async () => {
    expect(verdict(await bash(guardFor({ policy: { deny: ['Bash(rm:*)'] } }), 'rm $X'))).toEqual({ effect: 'deny', rule: 'Bash(rm:*)' });
    expect(verdict(await bash(guardFor({ policy: { deny: ['Bash(make build)'] } }), 'make $X'))).toEqual({ effect: 'deny', rule: 'Bash(make build)' });
  });

  it('does not let an allow pattern cover an argument not known before the call runs', async () => {
    expect(await bash(guardFor({ policy: { allow: ['Bash(rm:*)'] } }), 'rm $X')).toMatchObject({ effect: 'ask' });
    const exact = guardFor({ policy: { allow: ['Bash(make build)'] } });
    expect(verdict(await bash(exact, 'make $X'))).toEqual({ effect: 'ask', rule: 'default' });
    expect(verdict(await bash(exact, 'make build'))).toEqual({ effect: 'allow', rule: 'Bash(make build)' });
  });

  it('stops `cat` and the Read tool alike with a `Read(./migrations/**)` deny', async () => {
    const guard = guardFor({ policy: { deny: ['Read(./migrations/**)'] } });
    expect(verdict(await bash(guard, 'cat migrations/1.sql'))).toEqual({ effect: 'deny', rule: 'Read(./migrations/**)' });
    expect(verdict(await bash(guard, 'cd migrations && head 1.sql'))).toEqual({ effect: 'deny', rule: 'Read(./migrations/**)' });
    expect(verdict(await tool(guard, 'Read', { file_path: 'migrations/1.sql' }))).toEqual({ effect: 'deny', rule: 'Read(./migrations/**)' });
    expect(verdict(await tool(guard, 'Read', { file_path: path.join(repo, 'migrations/1.sql') }))).toEqual({ effect: 'deny', rule: 'Read(./migrations/**)' });
    expect(verdict(await bash(guard, 'cat src/a.js'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('applies an `Edit(src/**)` rule to writes by Bash as well as by the file tools', async () => {
    const guard = guardFor({ policy: { deny: ['Edit(src/**)'] } });
    expect(verdict(await bash(guard, 'echo x > src/b.js'))).toEqual({ effect: 'deny', rule: 'Edit(src/**)' });
    expect(verdict(await bash(guard, 'cp src/a.js src/c.js'))).toEqual({ effect: 'deny', rule: 'Edit(src/**)' });
    expect(verdict(await tool(guard, 'Write', { file_path: 'src/b.js', content: 'x' }))).toEqual({ effect: 'deny', rule: 'Edit(src/**)' });
    expect(verdict(await tool(guard, 'Edit', { file_path: 'src/a.js', old_string: '1', new_string: '2' }))).toEqual({ effect: 'deny', rule: 'Edit(src/**)' });
    // Reading is not editing.
    expect(verdict(await bash(guard, 'cat src/a.js'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });
});

describe('expression rules', () => {
  beforeAll(loadConditionLanguage);

  it('matches on the commands a call runs', async () => {
    const guard = guardFor({ policy: { rules: [{ id: 'no-curl', when: 'commands.exists(c, c.name == "curl")', effect: 'deny', reason: 'no network from here' }] } });
    expect(await bash(guard, 'timeout 5 curl https://example.com')).toMatchObject({ effect: 'deny', rule: 'no-curl', scope: 'ticket', reason: 'no network from here' });
    expect(verdict(await bash(guard, 'ls src'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('matches on the paths a call touches and the ticket labels', async () => {
    const guard = guardFor({
      policy: {
        rules: [
          { id: 'ui-migrations', when: '"ui" in ticket.labels && paths.exists(p, p.relative.startsWith("migrations/"))', effect: 'deny' },
          { id: 'db-migrations', when: '"db" in ticket.labels && paths.exists(p, p.relative.startsWith("migrations/"))', effect: 'ask' },
        ],
      },
    });
    expect(await bash(guard, 'cat migrations/1.sql')).toMatchObject({ effect: 'ask', rule: 'db-migrations', reason: 'the ticket rule db-migrations' });
    expect(verdict(await tool(guard, 'Read', { file_path: 'migrations/1.sql' }))).toEqual({ effect: 'ask', rule: 'db-migrations' });
    expect(verdict(await bash(guard, 'cat src/a.js'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('allows by an allow rule a call nothing else covers', async () => {
    const guard = guardFor({ policy: { rules: [{ id: 'npm-ci', when: 'commands.all(c, c.argv == ["npm", "ci"])', effect: 'allow' }] } });
    expect(verdict(await bash(guard, 'npm ci'))).toEqual({ effect: 'allow', rule: 'npm-ci' });
    expect(verdict(await bash(guard, 'npm install'))).toEqual({ effect: 'ask', rule: 'default' });
  });

  it('counts a condition that fails to evaluate as matching for deny', async () => {
    const guard = guardFor({ policy: { rules: [{ id: 'broken', when: 'args.nope.x == 1', effect: 'deny' }] } });
    const decision = await bash(guard, 'ls');
    expect(verdict(decision)).toEqual({ effect: 'deny', rule: 'broken' });
    expect(decision.reason).toContain('the condition could not be evaluated');
  });

  it('counts a condition that fails to evaluate as matching for ask', async () => {
    const guard = guardFor({ policy: { rules: [{ id: 'broken', when: 'args.nope.x == 1', effect: 'ask' }] } });
    expect(verdict(await tool(guard, 'Read', { file_path: 'src/a.js' }))).toEqual({ effect: 'ask', rule: 'broken' });
  });

  it('never lets a condition that fails to evaluate allow', async () => {
    const guard = guardFor({ policy: { rules: [{ id: 'broken', when: 'args.nope.x == 1', effect: 'allow' }] } });
    expect(verdict(await bash(guard, 'npm install'))).toEqual({ effect: 'ask', rule: 'default' });
  });

  it('counts a condition that is not a boolean as failing to evaluate', async () => {
    const guard = guardFor({ policy: { rules: [{ id: 'not-boolean', when: 'tool', effect: 'allow' }] } });
    expect(verdict(await bash(guard, 'npm install'))).toEqual({ effect: 'ask', rule: 'default' });
  });
});

describe('defaults', () => {
  it('applies `default_effect: deny` to a call nothing covers, naming the rule `default`', async () => {
    const guard = guardFor({ policy: { default_effect: 'deny' } });
    const decision = await bash(guard, 'npm install');
    expect(decision).toMatchObject({ effect: 'deny', rule: 'default', scope: 'default' });
    expect(decision.reason).toContain('the default (deny) applies');
    expect(verdict(await bash(guard, 'ls src'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('takes the default effect from the scopes above the ticket when the ticket sets none', async () => {
    const guard = guardFor({ above: [{ scope: 'project', file: { default_effect: 'deny' } }] });
    expect(verdict(await bash(guard, 'npm install'))).toEqual({ effect: 'deny', rule: 'default' });
  });

  it('takes the strictest default any scope sets, so a ticket cannot loosen a project default', async () => {
    const guard = guardFor({ above: [{ scope: 'project', file: { default_effect: 'deny' } }], policy: { default_effect: 'allow' } });
    expect(await bash(guard, 'npm install')).toMatchObject({ effect: 'deny', rule: 'default' });
    expect(guard.policy.defaultScope).toBe('project');
    const looser = guardFor({ above: [{ scope: 'user', file: { default_effect: 'allow' } }], policy: { default_effect: 'ask' } });
    expect(looser.policy).toMatchObject({ defaultEffect: 'ask', defaultScope: 'ticket' });
  });

  it('does not let a glob that would read more folders than it may through: the unread rest could be anything', async () => {
    const deep = makeRepo();
    for (let i = 0; i < 10_050; i++) mkdirSync(path.join(deep, 'src', `d${i}`));
    const guard = guardFor({ worktree: deep });
    // A read inside the worktree is allowed, but not one whose glob could not be followed to its end.
    const cut = await bash(guard, 'cat src/d*/*/x*');
    expect(cut.effect).not.toBe('allow');
    expect(cut.reason).toContain('too many folders');
    expect(await bash(guard, 'cat src/d1/*/x*')).toMatchObject({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('asks by default', async () => {
    expect(await bash(guardFor(), 'npm install')).toMatchObject({ effect: 'ask', rule: 'default', scope: 'default' });
  });

  it('denies a tool corral does not know', async () => {
    const guard = guardFor({ policy: { allow: ['WebFetch'] } });
    expect(await tool(guard, 'WebFetch', { url: 'https://example.com' })).toMatchObject({ effect: 'deny', rule: 'baseline.unknown-tool', scope: 'baseline' });
  });
});

describe('the write-time fence', () => {
  it('denies a write outside the allow globs, by any tool', async () => {
    const guard = guardFor();
    const outside = { effect: 'deny', rule: 'fence.outside-allow', scope: 'ticket' };
    expect(await tool(guard, 'Write', { file_path: 'migrations/1.sql', content: 'x' })).toMatchObject(outside);
    expect(await tool(guard, 'Edit', { file_path: 'migrations/1.sql', old_string: 'id', new_string: 'key' })).toMatchObject(outside);
    expect(await bash(guard, 'echo x > migrations/1.sql')).toMatchObject(outside);
    expect(await bash(guard, 'cd src && echo x > ../migrations/1.sql')).toMatchObject(outside);
  });

  it('denies a write into a forbidden glob even inside the allow globs, by any tool', async () => {
    const guard = guardFor();
    const forbidden = { effect: 'deny', rule: 'fence.forbidden', scope: 'ticket' };
    expect(await tool(guard, 'Write', { file_path: 'src/gen/x.js', content: 'x' })).toMatchObject(forbidden);
    expect(await tool(guard, 'Edit', { file_path: 'src/gen/x.js', old_string: 'a', new_string: 'b' })).toMatchObject(forbidden);
    expect(await bash(guard, 'echo x > src/gen/x.js')).toMatchObject(forbidden);
    expect(await bash(guard, 'cd src && echo x > gen/x.js')).toMatchObject(forbidden);
  });

  it('allows a write inside the allow globs', async () => {
    const guard = guardFor();
    expect(verdict(await tool(guard, 'Write', { file_path: 'src/b.js', content: 'x' }))).toEqual({ effect: 'allow', rule: 'baseline.fenced-write' });
    expect(verdict(await bash(guard, 'cd src && echo x > b.js'))).toEqual({ effect: 'allow', rule: 'baseline.fenced-write' });
  });
});

describe('outside the worktree', () => {
  it("allows writes into the run's temp dir", async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, `echo x > ${tmp}/f`))).toEqual({ effect: 'allow', rule: 'baseline.fenced-write' });
    expect(verdict(await tool(guard, 'Write', { file_path: path.join(tmp, 'notes.txt'), content: 'x' }))).toEqual({ effect: 'allow', rule: 'baseline.fenced-write' });
  });

  it('denies writes anywhere else outside the worktree', async () => {
    const guard = guardFor();
    expect(await bash(guard, 'echo x > /tmp/other')).toMatchObject({ effect: 'deny', rule: 'baseline.write-outside', scope: 'baseline' });
    expect(verdict(await tool(guard, 'Write', { file_path: '/tmp/other', content: 'x' }))).toEqual({ effect: 'deny', rule: 'baseline.write-outside' });
  });

  it('does not allow a read through a symlink that leads out of the worktree', async () => {
    const guard = guardFor();
    expect((await bash(guard, 'cat out/passwd')).effect).not.toBe('allow');
    expect((await tool(guard, 'Read', { file_path: 'out/passwd' })).effect).not.toBe('allow');
  });

  it('denies a write through a symlink that leads out of the worktree', async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, 'echo x > out/passwd'))).toEqual({ effect: 'deny', rule: 'baseline.write-outside' });
    expect(verdict(await tool(guard, 'Write', { file_path: 'out/passwd', content: 'x' }))).toEqual({ effect: 'deny', rule: 'baseline.write-outside' });
  });
});

describe("the ticket's checks", () => {
  it('allows the check command as written', async () => {
    expect(await bash(guardFor(), 'npm test')).toMatchObject({ effect: 'allow', rule: 'ticket.checks', scope: 'ticket' });
  });

  it('allows the check command under a wrapper and in a pipeline of known commands', async () => {
    expect(verdict(await bash(guardFor(), 'timeout 60 npm test 2>&1 | tail'))).toEqual({ effect: 'allow', rule: 'ticket.checks' });
  });

  it('does not stretch to other commands of the same program, nor to the check run elsewhere', async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, 'npm install'))).toEqual({ effect: 'ask', rule: 'default' });
    expect(verdict(await bash(guard, 'npm test; npm install'))).toEqual({ effect: 'ask', rule: 'default' });
    expect(verdict(await bash(guard, 'cd src && npm test'))).toEqual({ effect: 'ask', rule: 'default' });
  });
});

describe('secrets', () => {
  it('denies reading a .env file but not its template', async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, 'cat .env'))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect(verdict(await bash(guard, 'cat .env.example'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('denies git commands that print history when git tracks a secret, but not a log of subjects', async () => {
    const withSecret = makeRepo({ 'keys/deploy.pem': '-----BEGIN PRIVATE KEY-----\nnot a real key\n-----END PRIVATE KEY-----\n' });
    const guard = guardFor({ worktree: withSecret });
    const show = await bash(guard, 'git show HEAD');
    expect(verdict(show)).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect(show.reason).toContain('keys/deploy.pem');
    expect(verdict(await bash(guard, 'git log --oneline'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('allows git show when git tracks no secret', async () => {
    expect(verdict(await bash(guardFor(), 'git show HEAD'))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });

  it('denies a Grep whose glob aims at secret files', async () => {
    const guard = guardFor();
    expect(verdict(await tool(guard, 'Grep', { pattern: 'API_KEY', glob: '.env*' }))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect(verdict(await tool(guard, 'Grep', { pattern: 'API_KEY', glob: '*.js' }))).toEqual({ effect: 'allow', rule: 'baseline.read-only' });
  });
});

// Each of these was allowed by an earlier cut of the guard while bash does something else.
describe('where bash and the grammar part ways', () => {
  it('joins a word split by a line continuation, as bash does', async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, 'cat .e\\\nnv'))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect(verdict(await bash(guard, 'c\\\nat .env'))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
  });

  it('sees substitutions in indented, tab-stripped and backquoted heredoc bodies', async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, 'cat <<EOF\n  $(cat .env)\nEOF'))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect(verdict(await bash(guard, 'cat <<-EOF\n\t$(cat .env)\n\tEOF'))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect(verdict(await bash(guard, 'cat <<EOF\n`cat .env`\nEOF'))).toEqual({ effect: 'deny', rule: 'baseline.secrets' });
    expect((await bash(guard, "cat <<'EOF'\n$(cat .env)\nEOF")).effect).toBe('allow');
    expect((await bash(guard, 'cat <<EOF\n$((1+2)) "quoted" \\x\nEOF')).effect).toBe('allow');
  });

  it('keeps the cd and read of `command` and `builtin`, which run in the same shell', async () => {
    const guard = guardFor();
    expect(await bash(guard, 'command cd /etc; cat passwd')).toMatchObject({ effect: 'ask', reason: expect.stringContaining('/etc/passwd is outside the worktree') });
    expect((await bash(guard, 'F=src/a.js; builtin read F <<< .env; cat $F')).effect).not.toBe('allow');
  });

  it('forgets a variable that printf -v or ${F:=x} assigns', async () => {
    const guard = guardFor();
    expect((await bash(guard, 'F=src/a.js; printf -v F %s .env; cat $F')).effect).not.toBe('allow');
    expect((await bash(guard, 'F=; : ${F:=.env}; cat $F')).effect).not.toBe('allow');
  });

  it('does not know where cd goes once CDPATH is set', async () => {
    expect((await bash(guardFor(), 'CDPATH=/; cd etc && head -1 passwd')).effect).not.toBe('allow');
  });

  it('takes `..` after a symlink to the parent of its target, as the kernel does', async () => {
    const guard = guardFor();
    expect(verdict(await bash(guard, 'echo x > out/../src/a.js'))).toEqual({ effect: 'deny', rule: 'baseline.write-outside' });
    expect((await bash(guard, 'cat out/../passwd')).effect).not.toBe('allow');
    // The file tools clean `..` out before opening, so for them `out/..` is the worktree root.
    expect((await tool(guard, 'Write', { file_path: 'out/../src/a.js', content: 'x' })).effect).toBe('allow');
  });

  it('lets a path deny rule stop a search of a folder that holds its paths', async () => {
    const guard = guardFor({ policy: { deny: ['Read(./migrations/**)'] } });
    expect(verdict(await bash(guard, 'rg create'))).toEqual({ effect: 'deny', rule: 'Read(./migrations/**)' });
    expect(verdict(await tool(guard, 'Grep', { pattern: 'create' }))).toEqual({ effect: 'deny', rule: 'Read(./migrations/**)' });
    expect((await tool(guard, 'Grep', { pattern: 'create', path: 'src' })).effect).toBe('allow');
  });
});
