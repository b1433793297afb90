import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError, type Problem } from '../../src/errors.js';
import { checkTicketFile, loadTicket } from '../../src/ticket/load.js';
import { makeRepo, makeTempDir, writeFiles } from './temp-repo.js';

/** Writes `content` as `name` in a fresh repository and returns the problems found. */
async function problemsOf(name: string, content: string, repo = makeRepo()): Promise<Problem[]> {
  writeFiles(repo, { [name]: content });
  const result = await checkTicketFile(path.join(repo, name));
  expect(result.ticket).toBeUndefined();
  return result.problems;
}

/** line:column field — the part of a problem the tests pin down exactly. */
function where(problems: Problem[]): string[] {
  return problems.map((p) => `${p.line}:${p.column} ${p.field}`);
}

describe('checkTicketFile problems', () => {
  it('reports every problem of a file at once, at the right line, column and field', async () => {
    const problems = await problemsOf(
      't.yaml',
      [
        'id: "bad id"', // 1
        'alow: ["src/**"]', // 2
        'budget:', // 3
        '  steps: 0', // 4
        '  stpes: 3', // 5
        'checks:', // 6
        '  - npm test', // 7
        '  - run: 5', // 8
        '    nmae: x', // 9
        '  - 12', // 10
        'sandbox: docker', // 11
        'network: "yes"', // 12
        'env: [PATH, 1BAD]', // 13
        'check_rounds: 1.5', // 14
        '',
      ].join('\n'),
    );

    expect(where(problems)).toEqual([
      '1:1 task',
      '1:1 allow',
      '1:5 id',
      '2:1 alow',
      '4:10 budget.steps',
      '5:3 budget.stpes',
      '8:10 checks.1.run',
      '9:5 checks.1.nmae',
      '10:5 checks.2',
      '11:10 sandbox',
      '12:10 network',
      '13:13 env.1',
      '14:15 check_rounds',
    ]);
    expect(problems.find((p) => p.field === 'budget.stpes')?.hint).toBe('did you mean `steps`?');
    expect(problems.find((p) => p.field === 'checks.1.nmae')?.hint).toBe('did you mean `name`?');
    expect(problems.find((p) => p.field === 'network')?.message).toBe('expected true or false or a mapping, got `"yes"`');
    expect(problems.find((p) => p.field === 'checks.2')?.message).toBe('expected text or a mapping, got `12`');
  });

  it('suggests `allow` for `alow`, and lists the known fields when nothing is close', async () => {
    const problems = await problemsOf('t.yaml', 'task: t\nallow: ["**"]\nalow: ["src/**"]\nzzzzz: 1\ncheckRounds: 1\n');

    expect(problems.map(formatProblemShort)).toEqual([
      '3:1 alow: unknown field (did you mean `allow`?)',
      expect.stringMatching(/^4:1 zzzzz: unknown field \(known fields: id, title, repo, base, task, allow, .*\binstructions\b.*\bnetwork\)$/),
      '5:1 checkRounds: unknown field (did you mean `check_rounds`?)',
    ]);
  });

  it('describes wrong types in terms of YAML', async () => {
    const problems = await problemsOf(
      't.yaml',
      'task: [a]\nallow: src/**\nforbid: {a: 1}\nbudget: 3\nlabels: [1]\npolicy: yes\ntitle: 7\n',
    );

    expect(problems.map(formatProblemShort)).toEqual([
      '1:7 task: expected text, got a list (write `task:` in YAML, or the text after the front matter in a Markdown ticket)',
      '2:8 allow: expected a list, got `"src/**"` (list the paths the run may change, e.g. `allow: ["src/**"]`)',
      '3:9 forbid: expected a list, got a mapping (list the paths that may never change, e.g. `forbid: ["migrations/**"]`)',
      '4:9 budget: expected a mapping, got `3` (a mapping with `steps`, `tokens`, `minutes` and `usd`)',
      '5:10 labels.0: expected text, got `1`',
      '6:9 policy: expected a mapping, got `"yes"` (a mapping with `allow`, `ask` and `deny` patterns, `rules` and `default_effect`)',
      '7:8 title: expected text, got `7`',
    ]);
  });

  it('points a missing field at the mapping that should hold it', async () => {
    const problems = await problemsOf('t.yaml', '# a comment\n\ntitle: x\nchecks:\n  - name: n\n');

    expect(problems.map(formatProblemShort)).toEqual([
      '3:1 task: required field is missing (write `task:` in YAML, or the text after the front matter in a Markdown ticket)',
      '3:1 allow: required field is missing (list the paths the run may change, e.g. `allow: ["src/**"]`)',
      '5:5 checks.0.run: required field is missing (a bash command line, e.g. `run: npm test`)',
    ]);
  });

  it('reports an empty file as missing task and allow at 1:1', async () => {
    expect(where(await problemsOf('t.yaml', ''))).toEqual(['1:1 task', '1:1 allow']);
  });

  it('rejects empty values', async () => {
    const problems = await problemsOf('t.yaml', 'task: "  "\nallow: []\nbase: ""\nsetup: [""]\ntitle:\n');

    expect(problems.map(formatProblemShort)).toEqual([
      '1:7 task: task is empty (write `task:` in YAML, or the text after the front matter in a Markdown ticket)',
      '2:8 allow: must not be empty (list the paths the run may change, e.g. `allow: ["src/**"]`)',
      '3:7 base: must not be empty',
      '4:9 setup.0: command is empty (write a bash command, or a mapping `{run: ..., name: ..., timeout_seconds: ...}`)',
      '5:1 title: expected text, got nothing',
    ]);
  });

  it('reports bad globs in allow and forbid with what is wrong', async () => {
    const problems = await problemsOf(
      't.yaml',
      [
        'task: t',
        'allow:',
        '  - /etc/**',
        '  - ../other/**',
        '  - src\\*.ts',
        '  - "src/[ab"',
        '  - "src/{a,b"',
        '  - "src/+(a"',
        '  - ""',
        'forbid: ["./secrets/**", "a}"]',
        '',
      ].join('\n'),
    );

    expect(problems.map(formatProblemShort)).toEqual([
      '3:5 allow.0: glob `/etc/**` is absolute (globs are relative to the repository root: write `etc/**`)',
      '4:5 allow.1: glob `../other/**` has a `..` segment (globs cannot reach outside the repository; write the path from the repository root)',
      '5:5 allow.2: glob `src\\*.ts` contains a backslash (separate directories with `/`; backslash escapes are not supported)',
      '6:5 allow.3: glob `src/[ab` has a `[` that is not closed (character 5) (balance `[...]` and `{...}`)',
      '7:5 allow.4: glob `src/{a,b` has a `{` that is not closed (balance `[...]` and `{...}`)',
      '8:5 allow.5: glob `src/+(a` is not a valid pattern: Missing closing: ")" (check that `[...]`, `{...}` and `(...)` are balanced)',
      '9:5 allow.6: must not be empty (list the paths the run may change, e.g. `allow: ["src/**"]`)',
      '10:10 forbid.0: glob `./secrets/**` has a `.` segment (paths are matched without `./`: write `secrets/**`)',
      '10:26 forbid.1: glob `a}` has a `}` without `{` at character 2 (balance `[...]` and `{...}`)',
    ]);
  });

  it('reports a repo that is not a git repository, and one that does not exist', async () => {
    const plain = makeTempDir();
    writeFiles(plain, { 'not-git/file.txt': 'x' });

    const problems = await problemsOf('t.yaml', 'task: t\nallow: ["**"]\nrepo: not-git\n', plain);
    expect(where(problems)).toEqual(['3:7 repo']);
    expect(problems[0]?.message).toBe(`\`not-git\` is not in a git repository (resolved to ${path.join(plain, 'not-git')})`);

    const missing = await problemsOf('u.yaml', 'task: t\nallow: ["**"]\nrepo: ../nowhere\n', plain);
    expect(missing[0]?.message).toMatch(/^`\.\.\/nowhere` is not a directory/);
  });

  it('reports a ticket outside any repository when repo is not set', async () => {
    const problems = await problemsOf('t.yaml', 'task: t\nallow: ["**"]\n', makeTempDir());
    expect(problems.map(formatProblemShort)).toEqual([
      '1:1 repo: the ticket is not inside a git repository (set `repo:` to the repository to work on)',
    ]);
  });

  it('reports a base that does not resolve to a commit', async () => {
    const repo = makeRepo();
    const problems = await problemsOf('t.yaml', 'task: t\nallow: ["**"]\nbase: no-such-branch\n', repo);
    expect(problems.map(formatProblemShort)).toEqual([
      `3:7 base: \`no-such-branch\` does not resolve to a commit in ${repo} (use a branch, tag or commit that exists, e.g. \`base: main\`)`,
    ]);
  });

  it('reports a repository without commits when base is left to HEAD', async () => {
    const repo = makeRepo({});
    const problems = await problemsOf('t.yaml', 'task: t\nallow: ["**"]\n', repo);
    expect(problems.map(formatProblemShort)).toEqual([
      `1:1 base: \`HEAD\` does not resolve to a commit in ${repo} (the repository has no commits yet: commit something, or set \`base\`)`,
    ]);
  });

  it('reports a missing replay script, resolved against the ticket directory', async () => {
    const repo = makeRepo();
    const problems = await problemsOf('tickets/t.yaml', 'task: t\nallow: ["**"]\nmodel: replay:missing.jsonl\n', repo);
    expect(problems.map(formatProblemShort)).toEqual([
      `3:8 model: replay file \`missing.jsonl\` does not exist (resolved to ${path.join(repo, 'tickets/missing.jsonl')}) (the path is relative to the ticket file)`,
    ]);
  });

  it('reports a file name that is not a valid id when id is not set', async () => {
    const problems = await problemsOf('fix bug.yaml', 'task: t\nallow: ["**"]\n');
    expect(problems.map((p) => `${p.line}:${p.column} ${p.field}: ${p.message}`)).toEqual([
      '1:1 id: the file name gives the id `fix bug`, which is not valid',
    ]);
  });

  it('reports YAML syntax errors with their position', async () => {
    const problems = await problemsOf('t.yaml', 'task: t\nallow: ["**"]\ntask: again\nbudget: {steps: 1\n');
    expect(where(problems)).toEqual(['3:1 ', '5:1 ']);
    expect(problems[0]?.message).toBe('YAML: Map keys must be unique');
  });

  it('reports YAML warnings together with the schema problems', async () => {
    const problems = await problemsOf('t.yaml', 'task: !shout t\nallow: ["**"]\nsandbox: docker\n');
    expect(problems.map(formatProblemShort)).toEqual([
      '1:7 : YAML: Unresolved tag: !shout',
      '3:10 sandbox: expected one of `bwrap`, `none`, `auto`, got `"docker"`',
    ]);
  });

  it('reports a top level that is not a mapping', async () => {
    const problems = await problemsOf('t.yaml', '- task: t\n');
    expect(problems.map(formatProblemShort)).toEqual(['1:1 : expected a mapping, got a list']);
  });

  it('rejects an unsupported extension and a missing file', async () => {
    const repo = makeRepo();
    expect(where(await problemsOf('t.txt', 'task: t\nallow: ["**"]\n', repo))).toEqual(['1:1 ']);
    const missing = await checkTicketFile(path.join(repo, 'nope.yaml'));
    expect(missing.problems.map((p) => p.message)).toEqual(['cannot read the ticket: ENOENT']);
  });
});

describe('Markdown ticket problems', () => {
  it('reports positions as lines of the .md file', async () => {
    const problems = await problemsOf(
      't.md',
      ['---', 'title: x', 'alow: ["src/**"]', 'budget:', '  steps: -1', '---', '', 'Do the thing.', ''].join('\n'),
    );
    expect(problems.map(formatProblemShort)).toEqual([
      '2:1 allow: required field is missing (list the paths the run may change, e.g. `allow: ["src/**"]`)',
      '3:1 alow: unknown field (did you mean `allow`?)',
      '5:10 budget.steps: must be greater than 0',
    ]);
  });

  it('reports a task both in the front matter and after it', async () => {
    const problems = await problemsOf('t.md', '---\nallow: ["**"]\ntask: one\n---\ntwo\n');
    expect(problems.map(formatProblemShort)).toEqual([
      '3:1 task: the task is given twice: in the front matter and after it (keep one: remove `task:` or the text after the front matter)',
    ]);
  });

  it('reports a missing task when the body is empty', async () => {
    expect(where(await problemsOf('t.md', '---\nallow: ["**"]\n---\n\n'))).toEqual(['2:1 task']);
  });

  it('reports YAML errors at lines of the .md file', async () => {
    expect(where(await problemsOf('t.md', '---\nallow: ["**"]\nallow: x\n---\nbody\n'))).toEqual(['3:1 ']);
  });

  it('reports a Markdown ticket without front matter, or with front matter left open', async () => {
    const none = await problemsOf('t.md', '# Just a README\n');
    expect(none.map((p) => p.message)).toEqual(['a Markdown ticket must start with YAML front matter']);
    const open = await problemsOf('u.md', '---\nallow: ["**"]\nbody\n');
    expect(open.map((p) => p.message)).toEqual(['the front matter is not closed']);
  });
});

describe('loadTicket with problems', () => {
  it('throws a UsageError that names the file as given and carries every problem', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'tickets/x.yaml': 'alow: []\n' });
    const given = path.relative(process.cwd(), path.join(repo, 'tickets/x.yaml'));

    const error = await loadTicket(given).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(UsageError);
    const usage = error as UsageError;
    expect(usage.message).toBe(`${given}: 3 problems`);
    expect(usage.exitCode).toBe(64);
    expect(usage.problems.map((p) => [p.file, p.field])).toEqual([
      [given, 'task'],
      [given, 'allow'],
      [given, 'alow'],
    ]);
  });
});

/** `line:column field: message (hint)`, without the file, which is a temp path. */
function formatProblemShort(p: Problem): string {
  return `${p.line}:${p.column} ${p.field}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`;
}

describe('the context field', () => {
  it('names a window under the minimum, a negative keep and a misspelt key by line and field', async () => {
    const problems = await problemsOf('c.yaml', ['task: t', 'allow: ["**"]', 'context:', '  window: 500', '  keep_tool_results: -1', '  keep_tool_result: 2', ''].join('\n'));
    expect(where(problems)).toEqual(['4:11 context.window', '5:22 context.keep_tool_results', '6:3 context.keep_tool_result']);
    expect(problems.find((p) => p.field === 'context.keep_tool_result')?.hint).toBe('did you mean `keep_tool_results`?');
  });

  it('is carried to the ticket in the loop\'s words', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'ok.yaml': 'task: t\nallow: ["**"]\ncontext: {window: 50000, keep_tool_results: 0}\n', 'none.yaml': 'task: t\nallow: ["**"]\n' });
    expect((await loadTicket(path.join(repo, 'ok.yaml'))).context).toEqual({ window: 50_000, keepToolResults: 0 });
    expect((await loadTicket(path.join(repo, 'none.yaml'))).context).toBeUndefined();
  });
});
