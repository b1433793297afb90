import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NO_USER_CONFIG, PROJECT_ROOT, runReport } from '../support/cli.js';
import { extraWorktrees, gitIn, repoWithFiles, tempDir } from '../support/repo.js';
import { parseTrace } from '../../src/trace/read.js';

// A full disk, for real: a small tmpfs mounted in a mount namespace of its own (root and
// `unshare --mount` needed; without them these tests are skipped and say why). The
// writer's own handling of a full disk is tested everywhere, with an injected ENOSPC, in
// test/trace/write.test.ts.

const BIN = path.join(PROJECT_ROOT, 'bin', 'corral.cjs');

function tmpfsWorks(): { ok: boolean; why: string } {
  if (process.platform !== 'linux') return { ok: false, why: 'not Linux' };
  if (process.getuid?.() !== 0) return { ok: false, why: 'not root, so no tmpfs can be mounted' };
  const dir = tempDir('corral-tmpfs-probe-');
  const probe = spawnSync('unshare', ['--mount', 'sh', '-c', `mount -t tmpfs -o size=64k tmpfs '${dir}'`], { encoding: 'utf8' });
  return probe.status === 0 ? { ok: true, why: '' } : { ok: false, why: `unshare --mount cannot mount a tmpfs here: ${(probe.stderr || probe.error?.message || '').trim()}` };
}

const tmpfs = tmpfsWorks();
const skipWhy = tmpfs.ok ? '' : ` (skipped: ${tmpfs.why})`;

interface Mounted {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `corral <args>` in `repo` with a tmpfs of `size` mounted on `mountPoint`, then copies
 * what the tmpfs holds to `copyTo` (the mount goes with the namespace).
 */
function runOnTmpfs(repo: string, mountPoint: string, size: string, args: string[], options: { env?: Record<string, string>; copyTo?: string } = {}): Mounted {
  const quoted = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`;
  const copy = options.copyTo ? `; cp -a ${quoted(mountPoint)}/. ${quoted(options.copyTo)}/` : '';
  const script = `mount -t tmpfs -o size=${size} tmpfs ${quoted(mountPoint)} || exit 99; node ${quoted(BIN)} ${args.map(quoted).join(' ')}; code=$?${copy}; exit $code`;
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', NO_COLOR: '1', XDG_CONFIG_HOME: NO_USER_CONFIG, ...options.env };
  const result = spawnSync('unshare', ['--mount', 'sh', '-c', script], { cwd: repo, env, encoding: 'utf8', timeout: 120_000 });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

const REPLAY = 'turns:\n  - tools:\n      - Write: {file_path: src/a.txt, content: "work\\n"}\n  - text: done\n';

function repo(ticket: string): string {
  return repoWithFiles({ 'src/a.txt': 'a\n', 'replay.yaml': REPLAY, 't.yaml': `task: t\nallow: ["src/**"]\nsandbox: none\nmodel: replay:replay.yaml\n${ticket}` }, 'corral-disk-');
}

const kept: { repo: string; dir: string }[] = [];
afterAll(() => {
  for (const { repo, dir } of kept) spawnSync('git', ['-C', repo, 'worktree', 'remove', '--force', '--force', dir]);
});

describe.skipIf(!tmpfs.ok)(`a full disk${skipWhy}`, () => {
  it('a --runs-dir without room for a run: exit 64 before anything runs, naming the folder and the space', () => {
    const dir = repo('');
    const runs = tempDir('corral-runs-');
    const result = runOnTmpfs(dir, runs, '256k', ['run', 't.yaml', '--json', '--runs-dir', runs], { copyTo: tempDir('corral-copy-') });
    expect(result.stderr).toContain(`not enough free space: ${runs} has 256.0 KiB free, and --runs-dir ${runs} needs at least 1.0 MiB`);
    expect(result.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(extraWorktrees(dir)).toEqual([]);
    expect(gitIn(dir, ['branch', '--list', 'corral/*']).trim()).toBe('');
  });

  it('a TMPDIR without room for the worktree: exit 64 before anything runs', () => {
    const dir = repoWithFiles({ 'src/big.txt': 'x'.repeat(200_000), 'replay.yaml': REPLAY, 't.yaml': 'task: t\nallow: ["src/**"]\nsandbox: none\nmodel: replay:replay.yaml\n' }, 'corral-disk-');
    const tmp = tempDir('corral-tmp-');
    const result = runOnTmpfs(dir, tmp, '128k', ['run', 't.yaml', '--json'], { env: { TMPDIR: tmp } });
    expect(result.stderr).toMatch(new RegExp(`not enough free space: ${tmp} has 128\\.0 KiB free, and a worktree of ${dir} needs 2\\d\\d\\.\\d KiB; .*set TMPDIR to a folder on a bigger disk`));
    expect(result.code).toBe(64);
    expect(result.stdout).toBe('');
    expect(existsSync(path.join(dir, '.corral'))).toBe(false);
    expect(extraWorktrees(dir)).toEqual([]);
  });

  it('a runs folder that fills up mid-run: the run stops at once, exit 70, the worktree kept and named, the trace whole lines', () => {
    const runs = tempDir('corral-runs-');
    // The setup fills the disk, then prints more than the trace's last page can take.
    const dir = repo(`setup: ["head -c 8000000 /dev/zero > '${runs}/fill'; head -c 6000 /dev/zero | tr '\\\\0' x"]\n`);
    const copy = tempDir('corral-copy-');
    const result = runOnTmpfs(dir, runs, '2m', ['run', 't.yaml', '--json', '--runs-dir', runs], { copyTo: copy });
    expect(result.code).toBe(70);
    const report = runReport(result.stdout);
    expect(report.status).toBe('internal_error');
    expect(report.reason).toMatch(/^cannot write the trace .*trace\.jsonl: no space left on the device \(ENOSPC\); the run was stopped; the worktree is kept at /);
    expect(report.worktree).toBeTruthy();
    kept.push({ repo: dir, dir: report.worktree });
    expect(report.reason).toContain(report.worktree);
    expect(extraWorktrees(dir)).toEqual([report.worktree]);
    expect(existsSync(report.worktree)).toBe(true);
    // Stopped at the setup: no model turn, no tool call.
    expect(report.steps).toBe(0);
    expect(report.toolCalls).toBe(0);
    const [runDir] = readdirSync(copy).filter((name) => name !== 'fill');
    const text = readFileSync(path.join(copy, runDir!, 'trace.jsonl'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const read = parseTrace(text, 'trace.jsonl', { mode: 'strict' });
    expect(read.events[0]?.type).toBe('run_start');
    expect(read.events.map((event) => event.type)).not.toContain('model_response');
  });
});
