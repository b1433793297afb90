import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { gitIn, makeDemoRepo } from '../support/repo.js';

// git keeps branches as paths: `corral` and `corral/<id>` cannot both be branches, nor
// `corral/<id>` and `corral/<id>/x`. A passed run must keep its result all the same.
describe('a passed run whose branch name clashes with a branch of the host', () => {
  for (const [existing, expected] of [
    ['corral', /^corral-cap-fine-.+$/],
    ['corral/cap-fine/x', /^corral\/cap-fine-.+$/],
  ] as const) {
    it(`commits beside a branch named ${existing} and says where`, async () => {
      const repo = makeDemoRepo();
      gitIn(repo, ['branch', existing]);
      const run = await runCli(['run', 'tickets/cap-fine.yaml', '--json'], { cwd: repo });
      expect(run.stderr).not.toContain('Error');
      expect(run.exitCode).toBe(0);
      const r = runReport(run.stdout) as { status: string; branch: string; warnings: string[] };
      expect(r.status).toBe('passed');
      expect(r.branch).toMatch(expected);
      expect(gitIn(repo, ['show', '--format=%s', '-s', r.branch])).toContain('corral:');
      expect(gitIn(repo, ['diff', '--name-only', 'HEAD', r.branch])).toContain('fixtures/example-project/src/fees.js');
      // The branch that was in the way is untouched.
      expect(gitIn(repo, ['rev-parse', existing])).toBe(gitIn(repo, ['rev-parse', 'HEAD']));
      expect(r.warnings.join('\n')).toContain(`branch ${existing} exists`);
      expect(r.warnings.join('\n')).toContain(`the result is on branch ${r.branch}`);
    });
  }
});
