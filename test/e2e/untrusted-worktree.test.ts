import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { commitFiles, gitIn, makeDemoRepo, tempDir } from '../support/repo.js';

// Without a sandbox, code the agent wrote runs as the person's own user whenever an allowed
// check runs it. It must not be able to change a file outside `allow`, or the host
// repository, without the run failing (exit 2): the proofs do not trust the worktree.

/** A ticket whose check runs `check.sh`, which the agent writes (inside `allow`) with `script`. */
function agentScriptTicket(repo: string, name: string, script: string): string {
  commitFiles(repo, {
    'outside.txt': 'outside the fence\n',
    [`fixtures/replay/${name}.yaml`]: [
      'turns:',
      '  - tools:',
      `      - Write: {file_path: fixtures/example-project/check.sh, content: ${JSON.stringify(script)}}`,
      '  - text: done',
      '',
    ].join('\n'),
    [`fixtures/tickets/${name}.yaml`]: [
      'task: t',
      'allow: ["fixtures/example-project/**"]',
      'checks: ["sh fixtures/example-project/check.sh"]',
      'sandbox: none',
      `model: replay:../replay/${name}.yaml`,
      '',
    ].join('\n'),
  });
  return `fixtures/tickets/${name}.yaml`;
}

async function runTicket(repo: string, ticket: string): Promise<{ exitCode: number; report: ReturnType<typeof runReport>; output: string }> {
  const run = await runCli(['run', ticket, '--json'], { cwd: repo });
  return { exitCode: run.exitCode, report: runReport(run.stdout), output: run.stdout + run.stderr };
}

describe('without a sandbox, a script a check runs cannot blind the fence', () => {
  it.each([
    ['skip-worktree', 'git update-index --skip-worktree outside.txt\necho changed >> outside.txt\n', 'outside.txt'],
    ['assume-unchanged', 'git update-index --assume-unchanged outside.txt\necho changed >> outside.txt\n', 'outside.txt'],
    ['skip-worktree, then deleted', 'git update-index --skip-worktree outside.txt\nrm outside.txt\n', 'outside.txt'],
    ['a new folder that ignores itself', 'mkdir -p lib/hidden\nprintf "*\\n" > lib/hidden/.gitignore\necho payload > lib/hidden/run.js\n', 'lib/hidden/run.js'],
  ])('%s: a change outside allow fails the run (exit 2)', async (name, script, changed) => {
    const repo = makeDemoRepo();
    const ticket = agentScriptTicket(repo, name.replace(/\W+/g, '-'), `${script}git status --porcelain\n`);
    const { exitCode, report, output } = await runTicket(repo, ticket);
    expect(exitCode, output).toBe(2);
    expect(report.status).toBe('fence_violated');
    expect(report.reason).toContain(changed);
    expect(report.branch).toBeNull();
  });

  it.each([
    ['appends to the host info/exclude', 'printf "x/\\n" >> "$common/info/exclude"', /info\/exclude/],
    ['writes the host info/attributes', 'printf "* filter=x\\n" > "$common/info/attributes"', /info\/attributes/],
    ['writes objects/info/alternates', 'mkdir -p "$TMPDIR/alt" && echo "$TMPDIR/alt" > "$common/objects/info/alternates"', /objects\/info\/alternates/],
    ['changes packed-refs', 'printf "# pack-refs with: peeled fully-peeled sorted \\n" > "$common/packed-refs"', /packed-refs/],
    ['changes a file of the host checkout', 'echo changed >> "$(dirname "$common")/outside.txt"', /host checkout file changed: outside\.txt/],
    ['hides a change in the host checkout with assume-unchanged', 'cd "$(dirname "$common")" && git update-index --assume-unchanged outside.txt && echo changed >> outside.txt', /host index/],
  ])('%s: the host changed, the run fails (exit 2)', async (name, line, says) => {
    const repo = makeDemoRepo();
    const script = `common=$(git rev-parse --path-format=absolute --git-common-dir)\n${line}\n`;
    const ticket = agentScriptTicket(repo, name.replace(/\W+/g, '-'), script);
    const { exitCode, report, output } = await runTicket(repo, ticket);
    expect(exitCode, output).toBe(2);
    expect(report.status).toBe('fence_violated');
    expect(report.reason).toMatch(/the host repository changed during the run/);
    expect(report.reason).toMatch(says);
  });
});

describe("corral's own git runs no command from the repository's config", () => {
  it('no filter or fsmonitor runs in worktree add, fence, patch or branch', async () => {
    const repo = makeDemoRepo();
    const { markers, script } = markerScript();
    commitFiles(repo, {
      '.gitattributes': '* filter=mark\n',
      'fixtures/replay/filters.yaml': 'turns:\n  - tools:\n      - Write: {file_path: fixtures/example-project/new.txt, content: "new\\n"}\n  - text: done\n',
      'fixtures/tickets/filters.yaml': 'task: t\nallow: ["fixtures/example-project/**"]\nchecks: ["true"]\nsandbox: none\nmodel: replay:../replay/filters.yaml\n',
    });
    gitIn(repo, ['config', 'filter.mark.clean', `${script} clean`]);
    gitIn(repo, ['config', 'filter.mark.smudge', `${script} smudge`]);
    gitIn(repo, ['config', 'filter.mark.required', 'true']);
    gitIn(repo, ['config', 'core.fsmonitor', `${script} fsmonitor`]);
    const run = await runCli(['run', 'fixtures/tickets/filters.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(report.branch).toBe('corral/filters');
    expect(gitIn(repo, ['show', 'corral/filters:fixtures/example-project/new.txt'])).toBe('new\n');
    expect(existsSync(report.patch)).toBe(true);
    expect(readdirSync(markers)).toEqual(['mark.sh']);
  });

  it("explain's look at the tracked files runs no fsmonitor", async () => {
    const repo = makeDemoRepo();
    const { markers, script } = markerScript();
    gitIn(repo, ['config', 'core.fsmonitor', `${script} fsmonitor`]);
    const explain = await runCli(['explain', 'git log -p'], { cwd: repo });
    expect(explain.exitCode, explain.stdout + explain.stderr).not.toBe(70);
    expect(readdirSync(markers)).toEqual(['mark.sh']);
  });
});

/** A script that touches a marker named after its first argument and passes its input through, like a filter. */
function markerScript(): { markers: string; script: string } {
  const markers = tempDir('corral-markers-');
  const script = path.join(markers, 'mark.sh');
  writeFileSync(script, `#!/bin/sh\ntouch "${markers}/ran-$1"\ncat\n`);
  chmodSync(script, 0o755);
  return { markers, script };
}
