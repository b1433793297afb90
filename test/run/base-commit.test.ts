import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadTicket } from '../../src/ticket/load.js';
import { runTicket } from '../../src/run/run-ticket.js';
import { makeRepo, makeTempDir, runGit, writeFiles } from '../ticket/temp-repo.js';

describe('the base a run starts from', () => {
  it('is the commit the ticket named when it was loaded, even if the branch moved since (a long batch)', async () => {
    const repo = makeRepo({
      'ticket.yaml': 'task: t\nallow: ["**"]\nallow_empty: true\nsandbox: none\nmodel: replay:replay.yaml\n',
      'replay.yaml': 'turns:\n  - text: nothing to do\n',
    });
    const checked = runGit(repo, ['rev-parse', 'HEAD']).trim();
    const ticket = await loadTicket(path.join(repo, 'ticket.yaml'));
    writeFiles(repo, { 'later.txt': 'committed after the ticket was checked\n' });
    runGit(repo, ['add', 'later.txt']);
    runGit(repo, ['commit', '-q', '-m', 'later']);

    const result = await runTicket(ticket, { keep: false, interrupt: new AbortController().signal, env: { PATH: process.env.PATH ?? '' }, cwd: repo, runsDir: makeTempDir('corral-runs-') });
    expect(result.status).toBe('passed');
    expect(result.baseCommit).toBe(checked);
    expect(runGit(repo, ['rev-parse', 'HEAD']).trim()).not.toBe(checked);
  });
});
