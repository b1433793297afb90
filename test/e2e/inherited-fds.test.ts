import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { PROJECT_ROOT, runCli, runReport } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// A descriptor that whatever started corral left open (a CI runner's, a terminal's) passes
// through Node and bubblewrap alike. A command must not get it: one open on a folder
// outside the sandbox reaches that folder's files. The run's checks go through the same
// sandbox as its Bash calls (its supervisor, or a bubblewrap per command), and check the
// descriptors of their own shell; a hook runs outside any sandbox, and checks its own.

const probe = await probeBubblewrap();

/** `corral`, started by a shell that leaves descriptor 200 open on a file outside the repository. */
function corralWithOpenDescriptor(): string {
  const dir = tempDir('corral-inherited-fd-');
  writeFileSync(path.join(dir, 'outside.txt'), 'not for the agent\n');
  const bin = path.join(dir, 'corral');
  writeFileSync(bin, `#!/usr/bin/env bash\nexec 200<'${path.join(dir, 'outside.txt')}'\nexec node '${path.join(PROJECT_ROOT, 'bin', 'corral.cjs')}' "$@"\n`);
  chmodSync(bin, 0o755);
  return bin;
}

const CHECK = "checks: ['echo /proc/$$/fd/*; test ! -e /proc/$$/fd/200']";

describe('descriptors corral itself was given', () => {
  for (const sandbox of ['none', 'bwrap', '{mode: bwrap, per_command: true}'] as const) {
    it.skipIf(sandbox !== 'none' && !probe.ok)(`never reach a command (sandbox: ${sandbox})`, async () => {
      const repo = repoWithFiles(
        {
          'ticket.yaml': ['task: t', 'allow: ["**"]', 'allow_empty: true', `sandbox: ${sandbox}`, 'model: replay:replay.yaml', CHECK, ''].join('\n'),
          'replay.yaml': 'turns:\n  - text: Done.\n',
        },
        'corral-inherited-fd-repo-',
      );
      const result = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, bin: corralWithOpenDescriptor() });
      expect(result.exitCode, result.stderr).toBe(0);
      const report = runReport(result.stdout);
      expect(report.status, JSON.stringify(report.checks)).toBe('passed');
    });
  }

  it('never reach a hook, which runs outside any sandbox', async () => {
    const seenBy = path.join(tempDir('corral-inherited-fd-hook-'), 'fds.txt');
    const repo = repoWithFiles(
      {
        'ticket.yaml': ['task: t', 'allow: ["a.txt"]', 'sandbox: none', 'model: replay:replay.yaml', ''].join('\n'),
        'replay.yaml': ['turns:', '  - tools:', '      - Write: {file_path: a.txt, content: "a\\n"}', '  - text: Done.', ''].join('\n'),
        'corral.yaml': ['hooks:', '  PreToolUse:', '    - matcher: Write', '      hooks:', '        - type: command', `          command: ${JSON.stringify(`ls /proc/$$/fd > '${seenBy}'`)}`, ''].join('\n'),
      },
      'corral-inherited-fd-repo-',
    );
    const result = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, bin: corralWithOpenDescriptor() });
    expect(result.exitCode, result.stderr).toBe(0);
    const seen = readFileSync(seenBy, 'utf8').trim().split('\n');
    expect(seen).toContain('2');
    expect(seen).not.toContain('200');
  });
});
