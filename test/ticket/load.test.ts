import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTicket } from '../../src/ticket/load.js';
import { DEFAULT_BUDGET, DEFAULT_CHECK_ROUNDS, DEFAULT_COMMAND_TIMEOUT_MS } from '../../src/ticket/types.js';
import { makeRepo, makeTempDir, runGit, writeFiles } from './temp-repo.js';

describe('loadTicket on valid tickets', () => {
  it('loads a minimal YAML ticket with every default filled in', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'tickets/fix-date.yaml': 'task: Fix the date parser\nallow: ["src/**"]\n' });
    const file = path.join(repo, 'tickets/fix-date.yaml');

    expect(await loadTicket(file)).toEqual({
      file,
      id: 'fix-date',
      repo,
      base: 'HEAD',
      // Resolved once when the ticket is loaded, so a run starts from the commit that was checked.
      baseCommit: runGit(repo, ['rev-parse', 'HEAD']).trim(),
      task: 'Fix the date parser',
      allow: ['src/**'],
      forbid: [],
      setup: [],
      checks: [],
      budget: DEFAULT_BUDGET,
      given: { budget: {} },
      agent: 'corral',
      checkRounds: DEFAULT_CHECK_ROUNDS,
      allowEmpty: false,
      labels: [],
      env: {},
      sandbox: 'auto',
      sandboxChosen: false,
      sandboxRead: [],
      sandboxExpose: [],
      network: false,
      instructions: true,
      setupNetwork: true,
    });
  });

  it('normalises every field of a full YAML ticket', async () => {
    const repo = makeRepo();
    runGit(repo, ['branch', 'release']);
    writeFiles(repo, {
      'tickets/full.yml': [
        'id: T-1.a_b',
        'title: Everything',
        'repo: ..',
        'base: release',
        'task: |',
        '  Do it all.',
        'allow: ["src/**", "test/*.ts"]',
        'forbid: ["src/secret/**"]',
        'setup: [npm ci]',
        'checks:',
        '  - npm test',
        '  - run: npm run lint',
        '    name: lint',
        '    timeout_seconds: 1.5',
        'budget: {steps: 5, usd: 0.5}',
        'model: replay:../fixtures/session.jsonl',
        'check_rounds: 0',
        'allow_empty: true',
        'policy:',
        '  deny: [Bash(curl:*)]',
        'labels: [bug]',
        'env: [NPM_TOKEN, _X1]',
        'sandbox: none',
        'network: true',
        '',
      ].join('\n'),
      'fixtures/session.jsonl': '{}\n',
    });

    const ticket = await loadTicket(path.join(repo, 'tickets/full.yml'));

    expect(ticket).toEqual({
      file: path.join(repo, 'tickets/full.yml'),
      id: 'T-1.a_b',
      title: 'Everything',
      repo,
      base: 'release',
      baseCommit: runGit(repo, ['rev-parse', 'release^{commit}']).trim(),
      task: 'Do it all.',
      allow: ['src/**', 'test/*.ts'],
      forbid: ['src/secret/**'],
      setup: [{ name: 'npm ci', run: 'npm ci', timeoutMs: DEFAULT_COMMAND_TIMEOUT_MS }],
      checks: [
        { name: 'npm test', run: 'npm test', timeoutMs: DEFAULT_COMMAND_TIMEOUT_MS },
        { name: 'lint', run: 'npm run lint', timeoutMs: 1500 },
      ],
      budget: { ...DEFAULT_BUDGET, steps: 5, usd: 0.5 },
      given: { budget: { steps: 5, usd: 0.5 }, sandbox: 'none' },
      model: `replay:${path.join(repo, 'fixtures/session.jsonl')}`,
      agent: 'corral',
      checkRounds: 0,
      allowEmpty: true,
      policy: { deny: ['Bash(curl:*)'] },
      labels: ['bug'],
      env: { NPM_TOKEN: true, _X1: true },
      sandbox: 'none',
      sandboxChosen: true,
      sandboxRead: [],
      sandboxExpose: [],
      network: true,
      instructions: true,
      setupNetwork: true,
    });
  });

  it('takes the body of a Markdown ticket as the task', async () => {
    const repo = makeRepo();
    writeFiles(repo, {
      'tickets/readme.md': '---\ntitle: Docs\nallow: ["docs/**"]\n---\n\n# Update the docs\n\nMention the new flag.\n\n',
    });

    const ticket = await loadTicket(path.join(repo, 'tickets/readme.md'));

    expect(ticket.id).toBe('readme');
    expect(ticket.title).toBe('Docs');
    expect(ticket.task).toBe('# Update the docs\n\nMention the new flag.');
    expect(ticket.repo).toBe(repo);
  });

  it('accepts a Markdown ticket whose task is in the front matter and whose body is empty', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 'a.md': '---\ntask: Do it\nallow: ["**"]\n---\n   \n' });
    expect((await loadTicket(path.join(repo, 'a.md'))).task).toBe('Do it');
  });

  it('resolves `repo` relative to the ticket, to the top of that repository', async () => {
    const target = makeRepo({ 'pkg/index.js': '1\n' });
    const tickets = makeTempDir();
    writeFiles(tickets, {
      'x.yaml': `repo: ${path.relative(tickets, path.join(target, 'pkg'))}\ntask: t\nallow: ["pkg/**"]\n`,
    });

    expect((await loadTicket(path.join(tickets, 'x.yaml'))).repo).toBe(target);
  });

  it('keeps a model id as written', async () => {
    const repo = makeRepo();
    writeFiles(repo, { 't.yaml': 'model: claude-sonnet-4-5\ntask: t\nallow: ["**"]\n' });
    expect((await loadTicket(path.join(repo, 't.yaml'))).model).toBe('claude-sonnet-4-5');
  });
});
