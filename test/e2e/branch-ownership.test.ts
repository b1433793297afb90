import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { commitFiles, gitIn, makeDemoRepo, tempDir } from '../support/repo.js';

// A result branch is corral's to move only when it holds nothing but a corral result of
// the same ticket, and only if nobody moved it while the run was going.
describe('the result branch of a passed run', () => {
  it('never moves a corral/<id> branch holding commits corral did not make', async () => {
    const repo = makeDemoRepo();
    gitIn(repo, ['checkout', '-qb', 'corral/cap-fine']);
    commitFiles(repo, { 'mine.txt': 'my own work\n' });
    const theirs = gitIn(repo, ['rev-parse', 'HEAD']).trim();
    gitIn(repo, ['checkout', '-q', 'main']);
    const run = await runCli(['run', 'tickets/cap-fine.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const r = runReport(run.stdout) as { status: string; branch: string; warnings: string[] };
    expect(r.branch).toMatch(/^corral\/cap-fine-.+$/);
    expect(gitIn(repo, ['rev-parse', 'corral/cap-fine']).trim()).toBe(theirs);
    expect(gitIn(repo, ['show', '-s', '--format=%B', r.branch])).toContain('Ticket: cap-fine');
    expect(r.warnings.join('\n')).toContain('branch corral/cap-fine holds commits corral did not make');
    expect(r.warnings.join('\n')).toContain(`the result is on branch ${r.branch}`);
  });

  it('moves its own earlier result of the same ticket', async () => {
    const repo = makeDemoRepo();
    const first = runReport((await runCli(['run', 'tickets/cap-fine.yaml', '--json'], { cwd: repo })).stdout);
    const second = runReport((await runCli(['run', 'tickets/cap-fine.yaml', '--json'], { cwd: repo })).stdout);
    expect([first.branch, second.branch]).toEqual(['corral/cap-fine', 'corral/cap-fine']);
    expect(gitIn(repo, ['show', '-s', '--format=%B', 'corral/cap-fine'])).toContain(`Run: ${second.runId}`);
  });

  it('gives two runs of one ticket at the same time distinct branches, each with its own commit', async () => {
    const repo = makeDemoRepo();
    const barrier = tempDir('corral-barrier-');
    // Each run's check waits until both runs have reached it: both began before either commits.
    commitFiles(repo, {
      'tickets/twice.yaml': [
        'task: t',
        'allow: ["fixtures/example-project/**"]',
        'checks:',
        `  - run: 'mktemp -p ${barrier} >/dev/null && until [ "$(ls ${barrier} | wc -l)" -ge 2 ]; do sleep 0.05; done'`,
        'model: replay:../fixtures/replay/cap-fine.yaml',
        'sandbox: none',
        '',
      ].join('\n'),
    });
    const runs = await Promise.all([1, 2].map(() => runCli(['run', 'tickets/twice.yaml', '--json'], { cwd: repo })));
    const reports = runs.map((run) => runReport(run.stdout) as { status: string; branch: string });
    expect(reports.map((r) => r.status)).toEqual(['passed', 'passed']);
    const branches = reports.map((r) => r.branch);
    expect(new Set(branches).size).toBe(2);
    expect(branches).toContain('corral/twice');
    const commits = branches.map((branch) => gitIn(repo, ['rev-parse', branch]).trim());
    expect(commits[0]).not.toBe(commits[1]);
    for (const branch of branches) expect(gitIn(repo, ['show', '-s', '--format=%B', branch])).toContain('Ticket: twice');
  });
});
