import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, runReport } from '../support/cli.js';
import { gitIn, repoWithFiles } from '../support/repo.js';

// A guard hook that cannot start guards nothing: it is caught before the run (exit 64,
// naming the hook and its config line) when corral can see it, and denies the call it
// guards when it cannot start at run time.

const GUARD = '#!/bin/sh\nif grep -q "rm -rf" ; then echo "no rm -rf" >&2; exit 2; fi\nexit 0\n';

const config = (command: string): string =>
  ['# the guard', 'hooks:', '  PreToolUse:', '    - matcher: Bash', '      hooks:', '        - type: command', `          command: ${JSON.stringify(command)}`, ''].join('\n');

const REPLAY = ['turns:', '  - tools:', '      - Bash: {command: "rm -rf src"}', '      - Write: {file_path: src/a.txt, content: "b\\n"}', '  - text: done', ''].join('\n');

function baseRepo(): string {
  return repoWithFiles({
    'src/a.txt': 'a\n',
    'ticket.yaml': 'task: t\nallow: ["src/**"]\nmodel: replay:replay.yaml\nsandbox: none\npolicy:\n  allow: ["Bash(rm:*)"]\n',
    'replay.yaml': REPLAY,
  });
}

describe('a hook that cannot start', () => {
  it('an uncommitted corral.yaml naming an uncommitted hook script is refused before the run, naming both', async () => {
    const repo = baseRepo();
    writeFileSync(path.join(repo, 'corral.yaml'), config('"$CLAUDE_PROJECT_DIR"/scripts/guard.sh'));
    mkdirSync(path.join(repo, 'scripts'));
    writeFileSync(path.join(repo, 'scripts/guard.sh'), GUARD, { mode: 0o755 });
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain('corral.yaml:6:1: hooks.PreToolUse');
    expect(run.stderr).toContain('scripts/guard.sh is not in the base commit');
    expect(run.stderr).toContain('uncommitted');
    expect(existsSync(path.join(repo, '.corral', 'runs'))).toBe(false);
  });

  for (const [what, script, mode, expected] of [
    ['not executable', GUARD, 0o644, 'is not executable'],
    ['with a bad interpreter', GUARD.replace('/bin/sh', '/no/such/sh'), 0o755, 'bad interpreter'],
  ] as const) {
    it(`a committed hook script ${what} is refused before the run`, async () => {
      const repo = baseRepo();
      writeFileSync(path.join(repo, 'corral.yaml'), config('scripts/guard.sh'));
      mkdirSync(path.join(repo, 'scripts'));
      writeFileSync(path.join(repo, 'scripts/guard.sh'), script);
      chmodSync(path.join(repo, 'scripts/guard.sh'), mode);
      gitIn(repo, ['add', '-A']);
      gitIn(repo, ['commit', '-qm', 'hook']);
      const run = await runCli(['run', 'ticket.yaml'], { cwd: repo });
      expect(run.exitCode).toBe(64);
      expect(run.stderr).toContain('corral.yaml:6:1: hooks.PreToolUse');
      expect(run.stderr).toContain(expected);
    });
  }

  it('does not refuse hooks whose scripts it cannot judge: inline code, modules, tools setup makes', async () => {
    const repo = baseRepo();
    const hooks = ['bash -c "exit 0"', 'python3 -m json.tool --help', './node_modules/.bin/guard', 'jq -r .tool_name'];
    writeFileSync(path.join(repo, 'corral.yaml'), ['hooks:', '  PreToolUse:', '    - hooks:', ...hooks.map((command) => `        - {type: command, command: ${JSON.stringify(command)}}`), ''].join('\n'));
    writeFileSync(path.join(repo, '.gitignore'), 'node_modules/\n');
    gitIn(repo, ['add', '-A']);
    gitIn(repo, ['commit', '-qm', 'hooks']);
    const check = await runCli(['check', 'ticket.yaml'], { cwd: repo });
    expect(check.stderr).not.toContain('hook `');
    expect(check.exitCode).toBe(0);
  });

  it('denies the call it guards when it cannot start at run time (fail closed), not a warning', async () => {
    const repo = baseRepo();
    writeFileSync(path.join(repo, 'corral.yaml'), config('corral-test-no-such-guard-program'));
    gitIn(repo, ['add', '-A']);
    gitIn(repo, ['commit', '-qm', 'hook']);
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo });
    const report = runReport(run.stdout);
    expect(report.denied.map((d: { call: string }) => d.call)).toContain('Bash(rm -rf src)');
    expect(report.denied.find((d: { call: string }) => d.call === 'Bash(rm -rf src)').reason).toContain('could not start');
    expect(report.warnings.join('\n')).not.toContain('the run went on without it');
    // Nothing was removed: the patch holds the Write alone, no deletion.
    expect(report.changes.map((c: { change: { kind: string; path: string } }) => `${c.change.kind} ${c.change.path}`)).toEqual(['modified src/a.txt']);
  });
});
