import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { approvalKey, suggestedAllowRules } from '../../src/guard/approval/allow-rules.js';
import { APPROVALS_HEADER, createApprover, showCall, type ApprovalRequest } from '../../src/guard/approval/approver.js';
import { createTerminalPrompt, PromptClosedError, type TerminalPrompt } from '../../src/guard/approval/terminal-prompt.js';
import { makeVisible } from '../../src/text/visible.js';
import type { CallFacts, CommandFact, PathFact } from '../../src/guard/facts.js';
import { commandMatches, patternMatches } from '../../src/guard/rules/patterns.js';
import { parsePattern } from '../../src/policy/pattern-syntax.js';
import type { Decision, PatternRule } from '../../src/policy/types.js';
import { tempDir } from '../support/repo.js';

const WORKTREE = '/work/tree';
const DEFAULT_ASK: Decision = { effect: 'ask', rule: 'default', scope: 'default', reason: '`npm install lodash`: not known to be safe; no rule allows it, so the default (ask) applies' };
const NAMED_ASK: Decision = { effect: 'ask', rule: 'Bash(npm:*)', scope: 'project', reason: 'the project policy asks about Bash(npm:*)', source: '/repo/corral.yaml' };

function bash(command: string, commands: string[][], decision: Decision = DEFAULT_ASK): ApprovalRequest {
  return { ticketId: 'T-1', step: 3, tool: 'Bash', input: { command }, decision, commands, paths: [WORKTREE], worktree: WORKTREE };
}

function fileCall(tool: string, file: string, decision: Decision = DEFAULT_ASK): ApprovalRequest {
  return { ticketId: 'T-1', step: 4, tool, input: { file_path: file }, decision, commands: [], paths: [file], worktree: WORKTREE };
}

/** A terminal made of two streams: type into `input`, wait for text on `output`. */
function fakeTerminal() {
  const input = new PassThrough();
  const output = new PassThrough();
  let text = '';
  let wakers: Array<() => void> = [];
  output.setEncoding('utf8');
  output.on('data', (chunk: string) => {
    text += chunk;
    const current = wakers;
    wakers = [];
    for (const wake of current) wake();
  });
  const count = (marker: string): number => text.split(marker).length - 1;
  /** Resolves once `marker` has been written `times` times in all. */
  const waitFor = async (marker: string, times = 1): Promise<void> => {
    while (count(marker) < times) await new Promise<void>((resolve) => wakers.push(resolve));
  };
  const prompt = createTerminalPrompt(input, output);
  return { input, output, prompt, text: () => text, count, waitFor, type: (line: string) => input.write(`${line}\n`) };
}

function attended(prompt: TerminalPrompt) {
  return createApprover({ prompt, approvalsFile: '/nonexistent/never-written.yaml' });
}

const signal = () => new AbortController().signal;

describe('terminal prompt', () => {
  it('shows the call, the parsed commands, the rule and the reason, and takes y as once', async () => {
    const term = fakeTerminal();
    const answer = attended(term.prompt).ask(bash('npm install lodash', [['npm', 'install', 'lodash']]), signal());
    await term.waitFor('Allow?');
    term.type('y');
    expect(await answer).toEqual({ approved: true, by: 'person', scope: 'once' });
    const lines = term.text().split('\n');
    expect(lines).toContain('corral: ticket T-1, step 3: a call needs approval');
    expect(lines).toContain('  Bash');
    expect(lines).toContain('    command: npm install lodash');
    expect(lines).toContain('  parsed commands: npm install lodash');
    expect(lines).toContain('  rule: default (default)');
    expect(lines).toContain(`  reason: ${DEFAULT_ASK.reason}`);
    expect(lines.at(-1)).toBe('Allow? [y]es once, [a]lways this run (default, commands `npm install …`), [N]o: ');
  });

  it('names the rule source', async () => {
    const term = fakeTerminal();
    const answer = attended(term.prompt).ask(bash('npm ci', [['npm', 'ci']], NAMED_ASK), signal());
    await term.waitFor('Allow?');
    term.type('yes');
    expect(await answer).toMatchObject({ approved: true, scope: 'once' });
    expect(term.text()).toContain('  rule: Bash(npm:*) (project, /repo/corral.yaml)\n');
  });

  it.each([
    ['a', { approved: true, by: 'person', scope: 'run' }],
    ['always', { approved: true, by: 'person', scope: 'run' }],
    ['n', { approved: false, by: 'person' }],
    ['No', { approved: false, by: 'person' }],
    ['', { approved: false, by: 'person' }],
  ])('answer %j', async (typed, expected) => {
    const term = fakeTerminal();
    const answer = attended(term.prompt).ask(bash('make', [['make']]), signal());
    await term.waitFor('Allow?');
    term.type(typed);
    expect(await answer).toEqual(expected);
  });

  it('re-asks after an answer it does not know, then takes y', async () => {
    const term = fakeTerminal();
    const answer = attended(term.prompt).ask(bash('make', [['make']]), signal());
    await term.waitFor('Allow?');
    term.type('sure');
    await term.waitFor('Allow?', 2);
    expect(term.text()).toContain('Please answer with one of the letters in brackets.\nAllow?');
    term.type('y');
    expect(await answer).toEqual({ approved: true, by: 'person', scope: 'once' });
    expect(term.count('Allow?')).toBe(2);
  });

  it('says no after three re-asks', async () => {
    const term = fakeTerminal();
    const answer = attended(term.prompt).ask(bash('make', [['make']]), signal());
    for (let shown = 1; shown <= 4; shown += 1) {
      await term.waitFor('Allow?', shown);
      term.type('maybe');
    }
    expect(await answer).toEqual({ approved: false, by: 'person' });
    expect(term.count('Allow?')).toBe(4);
  });

  it('says no at end of input, and for every later question', async () => {
    const term = fakeTerminal();
    const approver = attended(term.prompt);
    const answer = approver.ask(bash('make', [['make']]), signal());
    await term.waitFor('Allow?');
    term.input.end();
    expect(await answer).toEqual({ approved: false, by: 'person' });
    expect(await approver.ask(bash('make x', [['make', 'x']]), signal())).toEqual({ approved: false, by: 'person' });
    await expect(term.prompt.question(['Allow? '], signal())).rejects.toBeInstanceOf(PromptClosedError);
  });

  it('says no promptly when aborted while asking or while queued', async () => {
    const term = fakeTerminal();
    const controller = new AbortController();
    const first = attended(term.prompt).ask(bash('make', [['make']]), controller.signal);
    const queued = attended(term.prompt).ask(bash('make x', [['make', 'x']]), controller.signal);
    await term.waitFor('Allow?');
    controller.abort(new Error('interrupted'));
    expect(await first).toEqual({ approved: false, by: 'interrupted' });
    expect(await queued).toEqual({ approved: false, by: 'interrupted' });
    expect(term.count('Allow?')).toBe(1);
    await expect(term.prompt.question(['Allow? '], controller.signal)).rejects.toThrow('interrupted');
    // The prompt still works for a run that was not aborted.
    const later = attended(term.prompt).ask(bash('make y', [['make', 'y']]), signal());
    await term.waitFor('Allow?', 2);
    term.type('y');
    expect(await later).toMatchObject({ approved: true });
  });

  it('drops a line typed before the prompt appeared', async () => {
    const term = fakeTerminal();
    const asked = term.prompt.question(['first? '], signal());
    await term.waitFor('first?');
    term.type('one');
    expect(await asked).toBe('one');
    term.type('typed ahead');
    await new Promise<void>((resolve) => setImmediate(resolve));
    const second = term.prompt.question(['second? '], signal());
    await term.waitFor('second?');
    term.type('two');
    expect(await second).toBe('two');
  });

  it('never puts the input in raw mode, drops what was typed before the prompt, and close() releases it', async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true, rawModes: [] as boolean[], setRawMode(mode: boolean) { input.rawModes.push(mode); return input; } });
    const output = new PassThrough();
    const prompt = createTerminalPrompt(input, output);
    input.write('typed before any prompt\n');
    const asked = prompt.question(['Allow? '], signal());
    await once(output, 'data');
    input.write('y\n');
    expect(await asked).toBe('y');
    expect(input.rawModes).toEqual([]);
    prompt.close();
    expect(input.isPaused()).toBe(true);
    await expect(prompt.question(['Allow? '], signal())).rejects.toBeInstanceOf(PromptClosedError);
  });

  it('shows two concurrent asks one after the other', async () => {
    const term = fakeTerminal();
    const first = attended(term.prompt).ask(bash('npm install a', [['npm', 'install', 'a']]), signal());
    const second = attended(term.prompt).ask({ ...bash('cargo build', [['cargo', 'build']]), ticketId: 'T-2' }, signal());
    await term.waitFor('Allow?');
    expect(term.text()).toContain('ticket T-1');
    expect(term.text()).not.toContain('ticket T-2');
    term.type('y');
    await term.waitFor('Allow?', 2);
    term.type('n');
    expect(await first).toMatchObject({ approved: true });
    expect(await second).toEqual({ approved: false, by: 'person' });
    const text = term.text();
    expect(text.indexOf('ticket T-2')).toBeGreaterThan(text.indexOf('Allow?'));
    expect(text.indexOf('command: cargo build')).toBeGreaterThan(text.indexOf('command: npm install a'));
  });
});

describe('always for this run', () => {
  it('approves the same rule and command prefix without a prompt', async () => {
    const term = fakeTerminal();
    const approver = attended(term.prompt);
    const answer = approver.ask(bash('npm install lodash', [['npm', 'install', 'lodash']]), signal());
    await term.waitFor('Allow?');
    term.type('a');
    expect(await answer).toEqual({ approved: true, by: 'person', scope: 'run' });
    expect(await approver.ask(bash('npm install left-pad', [['npm', 'install', 'left-pad']]), signal())).toEqual({ approved: true, by: 'remembered' });
    expect(term.count('Allow?')).toBe(1);
  });

  it('asks again for another prefix, another rule or another run', async () => {
    const term = fakeTerminal();
    const approver = attended(term.prompt);
    const first = approver.ask(bash('npm install lodash', [['npm', 'install', 'lodash']]), signal());
    await term.waitFor('Allow?');
    term.type('a');
    await first;
    const others = [
      approver.ask(bash('npm publish', [['npm', 'publish']]), signal()),
      approver.ask(bash('npm install lodash', [['npm', 'install', 'lodash']], NAMED_ASK), signal()),
      approver.ask(bash('npm install lodash && rm -rf x', [['npm', 'install', 'lodash'], ['rm', '-rf', 'x']]), signal()),
      attended(term.prompt).ask(bash('npm install lodash', [['npm', 'install', 'lodash']]), signal()),
    ];
    for (let shown = 2; shown <= 5; shown += 1) {
      await term.waitFor('Allow?', shown);
      term.type('n');
    }
    for (const other of others) expect(await other).toEqual({ approved: false, by: 'person' });
  });

  it('covers a same-key ask that was waiting behind the answer', async () => {
    const term = fakeTerminal();
    const approver = attended(term.prompt);
    const first = approver.ask(fileCall('Read', '/etc/hosts'), signal());
    const second = approver.ask(fileCall('Read', '/etc/hosts'), signal());
    await term.waitFor('Allow?');
    term.type('a');
    expect(await first).toMatchObject({ scope: 'run' });
    expect(await second).toEqual({ approved: true, by: 'remembered' });
    expect(term.count('Allow?')).toBe(1);
  });

  it('keys on the rule and the first two words of each command, or on the paths', () => {
    expect(approvalKey(bash('npm install a', [['npm', 'install', 'a']]))).toBe(approvalKey(bash('npm install b', [['npm', 'install', 'b']])));
    expect(approvalKey(bash('a && b', [['npm', 'test'], ['make']]))).toBe(approvalKey(bash('b && a', [['make'], ['npm', 'test', '--x']])));
    expect(approvalKey(bash('npm install a', [['npm', 'install', 'a']]))).not.toBe(approvalKey(bash('npm ci', [['npm', 'ci']])));
    expect(approvalKey(fileCall('Read', '/etc/hosts'))).not.toBe(approvalKey(fileCall('Read', '/etc/passwd')));
    expect(approvalKey(fileCall('Read', '/etc/hosts'))).not.toBe(approvalKey(fileCall('Edit', '/etc/hosts')));
    // A command whose name is only known when it runs is remembered only as exactly itself.
    expect(approvalKey(bash('$X install a', [['<unknown>', 'install', 'a']]))).not.toBe(approvalKey(bash('$Y install a', [['<unknown>', 'install', 'a']])));
    // An option as the second word carries the program: only the exact call is remembered.
    expect(approvalKey(bash("python3 -c 'print(1)'", [['python3', '-c', 'print(1)']]))).not.toBe(approvalKey(bash("python3 -c 'import os'", [['python3', '-c', 'import os']])));
    // A path outside the worktree is part of what was approved.
    const outside = (file: string) => ({ ...bash(`cat ${file}`, [['cat', file]]), paths: [file] });
    expect(approvalKey(outside('/etc/hosts'))).not.toBe(approvalKey(outside('/etc/shadow')));
    expect(approvalKey(outside('/etc/hosts'))).toBe(approvalKey(outside('/etc/hosts')));
  });
});

describe('showing a call', () => {
  it('cuts each value at 300 characters and says how many were cut', () => {
    const lines = showCall('Write', { file_path: 'src/a.ts', content: 'x'.repeat(1534) });
    expect(lines[0]).toBe('Write');
    expect(lines[1]).toBe('  file_path: src/a.ts');
    expect(lines[2]).toBe(`  content: ${'x'.repeat(300)}… (+1234 chars)`);
    expect(showCall('Read', { file_path: 'y'.repeat(300) })[1]).toBe(`  file_path: ${'y'.repeat(300)}`);
    expect(showCall('Grep', { pattern: 'a', head_limit: 5 })[2]).toBe('  head_limit: 5');
  });

  it('makes control and invisible characters visible', () => {
    expect(makeVisible('\x1b[31mred')).toBe('\\x1b[31mred');
    expect(makeVisible('rm -rf /\u202e')).toBe('rm -rf /\\u{202e}');
    expect(makeVisible('a\u200bb')).toBe('a\\u{200b}b');
    expect(makeVisible('one\ntwo\tthree\r')).toBe('one\\ntwo\\tthree\\r');
    expect(makeVisible('C:\\x1b')).toBe('C:\\\\x1b');
    expect(makeVisible('\x00\x7f\x9b\u00ad\u2066\ufeff\u{e0041}\u00a0')).toBe('\\x00\\x7f\\x9b\\u{ad}\\u{2066}\\u{feff}\\u{e0041}\\u{a0}');
    expect(makeVisible('plain text, é, 日本, 🙂')).toBe('plain text, é, 日本, 🙂');
    expect(showCall('Bash', { command: 'echo hi\n\x1b[2J' })[1]).toBe('  command: echo hi\\n\\x1b[2J');
  });
});

describe('unattended', () => {
  it('refuses without a prompt and appends each refusal to a YAML file a person can paste from', async () => {
    const file = path.join(tempDir('corral-approvals-'), 'run', 'approvals-needed.yaml');
    const approver = createApprover({ approvalsFile: file });
    const command = 'npm install "left pad" # note: x';
    expect(await approver.ask(bash(command, [['npm', 'install', 'left pad'], ['npm', 'test']]), signal())).toEqual({ approved: false, by: 'unattended' });
    expect(await approver.ask(bash('npm ci', [['npm', 'ci']], NAMED_ASK), signal())).toEqual({ approved: false, by: 'unattended' });
    expect(await approver.ask(fileCall('Read', '/etc/hosts', { effect: 'ask', rule: 'baseline.outside', scope: 'baseline', reason: 'outside' }), signal())).toEqual({ approved: false, by: 'unattended' });

    const text = readFileSync(file, 'utf8');
    expect(text.startsWith(APPROVALS_HEADER)).toBe(true);
    const entries = parse(text) as Array<Record<string, unknown>>;
    expect(entries).toHaveLength(3);
    expect(entries[0]).toEqual({
      call: `Bash(${command})`,
      step: 3,
      ticket: 'T-1',
      asked_by: 'default (default)',
      reason: DEFAULT_ASK.reason,
      allow: ['Bash(npm test)'],
      note: expect.stringContaining('No allow rule is suggested for `npm install \'left pad\'`: a word in it is empty or holds whitespace'),
    });
    expect(entries[1]).toMatchObject({ asked_by: 'Bash(npm:*) (project, /repo/corral.yaml)', allow: ['Bash(npm ci)'] });
    expect(entries[1]!.note).toContain('An allow rule will not lift this ask');
    expect(entries[1]!.note).toContain('/repo/corral.yaml');
    expect(entries[1]!.note).toContain('a change to that ask rule');
    expect(entries[2]).toMatchObject({ call: 'Read(/etc/hosts)', step: 4, asked_by: 'baseline.outside (baseline)', allow: ['Read(/etc/hosts)'] });
    expect(entries[2]!.note).toContain("corral's baseline");
  });

  it('writes nothing when nothing was refused', async () => {
    const dir = tempDir('corral-approvals-');
    const file = path.join(dir, 'approvals-needed.yaml');
    createApprover({ approvalsFile: file });
    const term = fakeTerminal();
    const approver = createApprover({ prompt: term.prompt, approvalsFile: file });
    const answer = approver.ask(bash('make', [['make']]), signal());
    await term.waitFor('Allow?');
    term.type('n');
    await answer;
    expect(existsSync(file)).toBe(false);
  });

  it('keeps allow rules exact through YAML, awkward characters included', async () => {
    const file = path.join(tempDir('corral-approvals-'), 'approvals-needed.yaml');
    const argv = ['grep', '-e', "'#:[x]{y}\"z\"\u001b", '--', '*.ts'];
    await createApprover({ approvalsFile: file }).ask(bash('grep ...', [argv]), signal());
    const [entry] = parse(readFileSync(file, 'utf8')) as Array<{ allow: string[] }>;
    expect(entry!.allow).toHaveLength(1);
    expect(entry!.allow).toEqual(suggestedAllowRules(bash('grep ...', [argv])));
    expect(matchesCommand(entry!.allow[0]!, argv)).toBe(true);
  });
});

/** Whether `rule` parses as a Bash pattern that matches `argv` exactly, through the guard's own matcher. */
function matchesCommand(rule: string, argv: string[]): boolean {
  const parsed = parsePattern(rule);
  if (typeof parsed === 'string' || parsed.tool !== 'Bash' || parsed.specifier === null) return false;
  const fact = (words: string[]) => ({ name: path.posix.basename(words[0]!), argv: words }) as CommandFact;
  const facts = { tool: 'Bash', input: {}, commands: [fact(argv)], paths: [], problems: [] } as CallFacts;
  const allow: PatternRule = { kind: 'pattern', id: rule, effect: 'allow', scope: 'ticket', reason: '', tool: 'Bash', specifier: parsed.specifier };
  // Exact: not a prefix rule, and no other argument list of that length-plus-one matches.
  return commandMatches(parsed.specifier, fact(argv), false) && patternMatches(allow, facts, null, WORKTREE) && !commandMatches(parsed.specifier, fact([...argv, 'extra']), false);
}

function matchesPath(rule: string, tool: string, file: string): boolean {
  const parsed = parsePattern(rule);
  if (typeof parsed === 'string' || parsed.tool !== tool || parsed.specifier === null) return false;
  const fact = { given: file, path: file, access: tool === 'Edit' || tool === 'Write' ? 'write' : 'read', recursive: false } as PathFact;
  const facts = { tool, input: {}, commands: [], paths: [fact], problems: [] } as CallFacts;
  const allow: PatternRule = { kind: 'pattern', id: rule, effect: 'allow', scope: 'ticket', reason: '', tool, specifier: parsed.specifier };
  const other = { ...fact, path: `${file}x` };
  return patternMatches(allow, facts, null, WORKTREE) && !patternMatches(allow, { ...facts, paths: [other] }, null, WORKTREE);
}

describe('suggested allow rules', () => {
  it.each([
    [['npm', 'install', 'lodash'], 'Bash(npm install lodash)'],
    [['make'], 'Bash(make)'],
    [['find', '.', '-name', '*.ts'], 'Bash(find . -name \\*.ts)'],
    [['echo', 'a:*'], 'Bash(echo a:\\*)'],
    [['echo', '*'], 'Bash(echo \\*)'],
    [['echo', '!x*[a]{b,c}?(d)'], 'Bash(echo \\!x\\*\\[a\\]\\{b,c\\}\\?\\(d\\))'],
    [['echo', ')'], 'Bash(echo ))'],
    [['echo', "it's", '"q"', '$HOME', 'a\\b'], 'Bash(echo it\'s "q" $HOME a\\b)'],
    [['/usr/bin/git', 'status'], 'Bash(git status)'],
  ])('Bash %j → %s, which matches it', (argv, expected) => {
    const rules = suggestedAllowRules(bash(argv.join(' '), [argv]));
    expect(rules).toEqual([expected]);
    expect(matchesCommand(expected, argv)).toBe(true);
  });

  it.each([
    [['echo', 'a b']],
    [['echo', '']],
    [['echo', 'tab\there']],
    [['rm', '<unknown>']],
    [['echo', 'a\\*']],
  ])('Bash %j cannot be written as a pattern and is explained', async (argv) => {
    expect(suggestedAllowRules(bash('x', [argv]))).toEqual([]);
    const file = path.join(tempDir('corral-approvals-'), 'approvals-needed.yaml');
    await createApprover({ approvalsFile: file }).ask(bash('x', [argv]), signal());
    const [entry] = parse(readFileSync(file, 'utf8')) as Array<{ allow: string[]; note: string }>;
    expect(entry!.allow).toEqual([]);
    expect(entry!.note).toMatch(/^No allow rule is suggested for `.*`: /);
  });

  it('gives one rule per command, without repeats', () => {
    expect(suggestedAllowRules(bash('npm test && npm test && make', [['npm', 'test'], ['npm', 'test'], ['make']]))).toEqual(['Bash(npm test)', 'Bash(make)']);
  });

  it.each([
    ['Read', `${WORKTREE}/src/a.ts`, 'Read(src/a.ts)'],
    ['Edit', `${WORKTREE}/src/a.ts`, 'Edit(src/a.ts)'],
    ['Write', '/tmp/out.txt', 'Write(/tmp/out.txt)'],
    ['Glob', WORKTREE, 'Glob(.)'],
    ['Grep', `${WORKTREE}/docs`, 'Grep(docs)'],
    ['Read', `${WORKTREE}/!important [draft] (v2).md`, 'Read(\\!important \\[draft\\] \\(v2\\).md)'],
    ['Read', `${WORKTREE}/~/notes`, 'Read(./~/notes)'],
    ['Read', `${WORKTREE}/..hidden`, 'Read(..hidden)'],
  ])('%s %s → %s, which matches it', (tool, file, expected) => {
    const rules = suggestedAllowRules(fileCall(tool, file));
    expect(rules).toEqual([expected]);
    if (tool !== 'Glob') expect(matchesPath(expected, tool, file)).toBe(true);
  });

  it('suggests nothing for a path a pattern cannot hold', () => {
    expect(suggestedAllowRules(fileCall('Read', `${WORKTREE}/trailing `))).toEqual([]);
  });
});
