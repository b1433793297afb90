import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Decision } from '../../src/guard/decide.js';
import { createGuard, type Guard } from '../../src/guard/guard.js';
import { gitIn, tempDir } from '../support/repo.js';
import { judgeCall } from '../../src/run/call-pipeline.js';

/**
 * Programs that run code or read files named by data the guard would read as harmless:
 * options and files (lesskey, jq modules), ignore files that whitelist a secret for rg,
 * git config holding credentials, and a repository planted inside the worktree. Each
 * class is shown with the real program doing the harm, then the guard not allowing it.
 */

const has = (program: string): boolean => spawnSync('sh', ['-c', `command -v ${program}`]).status === 0;
const HAS_RG = has('rg');
const HAS_LESS = has('less');
const HAS_JQ = has('jq');
const HAS_TAR = has('tar');
/** Said in the name of a test that skips, so the report shows plainly why. */
const needs = (program: string, present: boolean): string => (present ? '' : ` (skipped: ${program} is not installed)`);

let home: string;
let tmp: string;

beforeAll(() => {
  home = tempDir('corral-cbd-home-');
  tmp = tempDir('corral-cbd-tmp-');
});

/** A committed repository with a `.env`, a plain `.gitignore` and `src/`, plus `extra` files. */
function makeRepo(extra: Record<string, string> = {}): string {
  const dir = tempDir('corral-cbd-');
  const files = { '.env': 'API_KEY=sk-cbd-not-a-real-key\n', '.gitignore': '.env\n', 'src/a.js': 'export const KEY_NAME = "API_KEY";\n', ...extra };
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), content);
  }
  gitIn(dir, ['init', '-q']);
  gitIn(dir, ['add', '-A']);
  gitIn(dir, ['commit', '-qm', 'code-by-data fixtures']);
  return dir;
}

function guardFor(worktree: string, env: Record<string, string> = {}): Guard {
  return createGuard({
    worktree,
    tmpDir: tmp,
    env: { HOME: home, PATH: process.env.PATH!, ...env },
    ticket: { id: 'T-1', labels: [], allow: ['src/**'], forbid: [], checks: [], policy: undefined, file: '/x/ticket.yaml' },
  });
}

async function bash(guard: Guard, command: string): Promise<Decision> {
  return (await judgeCall(guard, 'Bash', { command })).verdict.decision;
}

/** Runs a command with real bash in `cwd`, without the user's git config. */
function run(cwd: string, command: string): string {
  return execFileSync('bash', ['-c', command], { cwd, encoding: 'utf8', env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' }, stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('programs that run code or read files an option or input names', () => {
  it.skipIf(!HAS_LESS)(`less runs the LESSOPEN a lesskey file sets, so \`less -k\` and \`--lesskey-src\` are not allowed${needs('less', HAS_LESS)}`, async () => {
    const repo = makeRepo();
    const marker = path.join(tmp, 'lessopen-ran');
    writeFileSync(path.join(repo, 'src/keys.src'), `#env\nLESSOPEN=|touch ${marker}; cat %s\n`);
    run(repo, 'less --lesskey-src=src/keys.src src/a.js > /dev/null');
    expect(existsSync(marker)).toBe(true);
    rmSync(marker);

    const guard = guardFor(repo);
    for (const command of ['less --lesskey-src=src/keys.src src/a.js', 'less -k src/keys.src src/a.js', 'less --lesskey-file src/keys src/a.js', "less '+!touch x' src/a.js", 'less -t main']) {
      expect((await bash(guard, command)).effect, command).not.toBe('allow');
    }
    expect(await bash(guard, 'less -k .env src/a.js')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
    expect((await bash(guard, 'less +G src/a.js')).effect).toBe('allow');
  });

  it.skipIf(!HAS_JQ)(`jq reads the files its program imports from the module path, so imports and -L are not allowed${needs('jq', HAS_JQ)}`, async () => {
    const repo = makeRepo({ 'src/lib/data.json': '{"token": "from-a-file-no-argument-names"}\n' });
    expect(run(repo, `jq -n -L src/lib 'import "data" as $d; $d'`)).toContain('from-a-file-no-argument-names');
    const guard = guardFor(repo);
    for (const command of [`jq -n -L src/lib 'import "data" as $d; $d'`, `jq -n 'import "src/lib/data" as $d; $d'`, `jq 'include "m"; .' src/a.js`, 'jq -f src/prog.jq src/lib/data.json', 'jq --library-path src/lib -n 1']) {
      expect((await bash(guard, command)).effect, command).not.toBe('allow');
    }
    expect((await bash(guard, 'jq .token src/lib/data.json')).effect).toBe('allow');
    expect((await bash(guard, "jq '.include' src/lib/data.json")).effect).toBe('allow');
  });

  it.skipIf(!HAS_TAR)(`tar runs the program -I names even to list an archive; listing alone stays allowed${needs('tar', HAS_TAR)}`, async () => {
    const repo = makeRepo();
    const marker = path.join(tmp, 'tar-program-ran');
    writeFileSync(path.join(repo, 'src/unpack.sh'), `#!/bin/sh\ntouch ${marker}\ncat\n`);
    chmodSync(path.join(repo, 'src/unpack.sh'), 0o755);
    run(repo, 'tar -cf src/x.tar src/a.js && tar -I ./src/unpack.sh -tf src/x.tar');
    expect(existsSync(marker)).toBe(true);
    const guard = guardFor(repo);
    for (const command of ['tar -I ./src/unpack.sh -tf src/x.tar', 'tar --use-compress-program=./src/unpack.sh -tf src/x.tar', 'tar -tf src/x.tar --checkpoint=1 --checkpoint-action=exec=id', 'tar -xf src/x.tar', 'tar -tf host:x.tar']) {
      expect((await bash(guard, command)).effect, command).not.toBe('allow');
    }
    expect((await bash(guard, 'tar -tf src/x.tar')).effect).toBe('allow');
    expect((await bash(guard, 'tar tvf src/x.tar')).effect).toBe('allow');
    expect(await bash(guard, 'tar -tf .env')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
  });
});

// Without rg the guard's decisions are still checked; only the proof that rg prints the secret is left out.
describe(`search tools obeying ignore files the agent can write${HAS_RG ? '' : ' (rg is not installed: what rg prints is not checked)'}`, () => {
  const WHITELISTS: Record<string, string> = {
    '.ignore': '!.env\n',
    '.rgignore': '!.env\n',
    '.gitignore': '.env\n!.env\n',
    'src/../.ignore': '!.env*\n',
  };

  for (const [file, content] of Object.entries(WHITELISTS)) {
    it(`denies \`rg KEY\` when ${file} whitelists .env, which rg then prints`, async () => {
      const repo = makeRepo();
      writeFileSync(path.join(repo, file), content);
      if (HAS_RG) expect(run(repo, 'rg --no-messages API_KEY || true')).toContain('sk-cbd-not-a-real-key');
      expect(await bash(guardFor(repo), 'rg API_KEY')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
    });
  }

  it("denies a search whose parent directory's ignore file or the repository's exclude file whitelists the secret", async () => {
    const repo = makeRepo({ 'src/.env.local': 'API_KEY=sk-cbd-src-secret\n' });
    writeFileSync(path.join(repo, '.ignore'), '!.env.local\n');
    if (HAS_RG) expect(run(repo, 'rg --no-messages API_KEY src || true')).toContain('sk-cbd-src-secret');
    expect(await bash(guardFor(repo), 'rg API_KEY src')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });

    const other = makeRepo();
    // The worktree's .gitignore would beat the exclude file: without one, the exclude file decides.
    rmSync(path.join(other, '.gitignore'));
    writeFileSync(path.join(other, '.git/info/exclude'), '!.env\n');
    if (HAS_RG) expect(run(other, 'rg --no-messages API_KEY || true')).toContain('sk-cbd-not-a-real-key');
    expect(await bash(guardFor(other), 'rg API_KEY')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
  });

  it('denies a search in the same call that writes an ignore file, which is not on disk when the guard looks', async () => {
    const repo = makeRepo();
    expect(await bash(guardFor(repo), "echo '!.env' > src/.rgignore && rg API_KEY")).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
  });

  it('does not allow rg when RIPGREP_CONFIG_PATH names a config file, which can add --pre or --hidden', async () => {
    const repo = makeRepo({ 'src/rgrc': '--hidden\n--no-ignore\n' });
    if (HAS_RG) expect(run(repo, 'RIPGREP_CONFIG_PATH=src/rgrc rg --no-messages API_KEY || true')).toContain('sk-cbd-not-a-real-key');
    const guard = guardFor(repo, { RIPGREP_CONFIG_PATH: path.join(repo, 'src/rgrc') });
    expect((await bash(guard, 'rg foo src')).effect).not.toBe('allow');
    expect((await bash(guard, 'rg --no-config foo src')).effect).toBe('allow');
  });

  it('denies a search when a negation names a hidden directory holding a secret, which rg then enters', async () => {
    const repo = makeRepo({ 'deploy/.ssh/id_rsa': '-----BEGIN OPENSSH PRIVATE KEY----- API_KEY sk-cbd-ssh\n' });
    writeFileSync(path.join(repo, '.rgignore'), '!.ssh\n');
    if (HAS_RG) expect(run(repo, 'rg --no-messages API_KEY || true')).toContain('sk-cbd-ssh');
    expect(await bash(guardFor(repo), 'rg API_KEY')).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
  });

  it('keeps rg allowed when the only negations name files that are no secret (`!.env.example`, `!.gitkeep`)', async () => {
    const repo = makeRepo({ '.env.example': 'API_KEY=\n', 'build/.gitkeep': '' });
    writeFileSync(path.join(repo, '.gitignore'), '.env\nbuild/*\n!.env.example\n!.gitkeep\n!/build/.gitkeep\n');
    if (HAS_RG) expect(run(repo, 'rg --no-messages API_KEY || true')).not.toContain('sk-cbd');
    expect((await bash(guardFor(repo), 'rg API_KEY')).effect).toBe('allow');
  });

  it('keeps rg allowed with a plain .gitignore, at the root and in src', async () => {
    const repo = makeRepo({ 'src/.ignore': 'generated/\n' });
    const guard = guardFor(repo);
    if (HAS_RG) expect(run(repo, 'rg --no-messages API_KEY || true')).not.toContain('sk-cbd');
    expect((await bash(guard, 'rg API_KEY')).effect).toBe('allow');
    expect((await bash(guard, 'rg foo src')).effect).toBe('allow');
  });
});

describe('git printing credentials kept in the repository config', () => {
  it('denies reads that print config values or remote URLs, and allows names and plain keys', async () => {
    const repo = makeRepo();
    gitIn(repo, ['config', 'http.https://github.com/.extraheader', 'AUTHORIZATION: basic c2stY2JkLXRva2Vu']);
    gitIn(repo, ['remote', 'add', 'origin', 'https://user:sk-cbd-password@example.com/r.git']);
    gitIn(repo, ['config', 'user.name', 'Someone']);
    expect(run(repo, 'git config --list')).toContain('c2stY2JkLXRva2Vu');
    expect(run(repo, 'git remote -v')).toContain('sk-cbd-password');
    expect(run(repo, 'git var -l')).toContain('c2stY2JkLXRva2Vu');

    const guard = guardFor(repo);
    const printing = ['git config --list', 'git config -l --show-origin', 'git config --get-regexp extraheader', 'git config --get-all http.https://github.com/.extraheader', 'git config remote.origin.url', 'git config list', 'git remote -v', 'git remote get-url origin', 'git remote show -n origin', 'git var -l', 'git ls-remote --get-url', 'git -C src config -l'];
    for (const command of printing) expect(await bash(guard, command), command).toMatchObject({ effect: 'deny', rule: 'baseline.secrets' });
    for (const command of ['git config user.name', 'git config --get core.bare', 'git remote', 'git config --list --name-only', 'git var GIT_AUTHOR_IDENT']) {
      expect((await bash(guard, command)).effect, command).toBe('allow');
    }
    expect(run(repo, 'git remote')).toBe('origin\n');
    expect(run(repo, 'git config --list --name-only')).not.toContain('c2stY2JkLXRva2Vu');
  });
});

describe('git finding a repository planted inside the worktree', () => {
  /** A repository git will find in `src/x`: its config runs `core.fsmonitor`, which touches `marker`. */
  function plant(repo: string, marker: string, layout: 'bare' | 'gitfile'): void {
    const script = path.join(tmp, `fsmonitor-${layout}.sh`);
    writeFileSync(script, `#!/bin/sh\ntouch ${marker}\n`);
    chmodSync(script, 0o755);
    const gitDir = path.join(repo, layout === 'bare' ? 'src/x' : 'src/y');
    mkdirSync(path.join(gitDir, 'objects'), { recursive: true });
    mkdirSync(path.join(gitDir, 'refs'), { recursive: true });
    writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(path.join(gitDir, 'config'), `[core]\n\trepositoryformatversion = 0\n\tbare = false\n${layout === 'bare' ? '\tworktree = ..\n' : ''}\tfsmonitor = ${script}\n`);
    if (layout === 'gitfile') {
      mkdirSync(path.join(repo, 'src/x'), { recursive: true });
      writeFileSync(path.join(repo, 'src/x/.git'), 'gitdir: ../y\n');
    }
  }

  for (const layout of ['bare', 'gitfile'] as const) {
    it(`asks for git commands that would use a planted ${layout === 'bare' ? 'bare repository' : '`.git` file'}, whose fsmonitor real git runs`, async () => {
      const repo = makeRepo();
      const marker = path.join(tmp, `fsmonitor-ran-${layout}`);
      plant(repo, marker, layout);
      spawnSync('git', ['-C', 'src/x', 'status'], { cwd: repo, env: { ...process.env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' } });
      expect(existsSync(marker)).toBe(true);

      const guard = guardFor(repo);
      for (const command of ['git -C src/x status', 'cd src/x && git log', 'git -C src -C x diff', 'cd src && git -C x status --short']) {
        const decision = await bash(guard, command);
        expect(decision.effect, command).toBe('ask');
        expect(decision.reason, command).toMatch(/git would use the repository at src\/[xy]/);
      }
      // Its own repository still answers from anywhere under the worktree root but the planted one.
      expect((await bash(guard, 'git -C src log --oneline')).effect).toBe('allow');
      expect((await bash(guard, 'git status')).effect).toBe('allow');
    });
  }

  it('asks when the same call plants the repository before git runs, or git runs where it cannot know', async () => {
    const guard = guardFor(makeRepo());
    for (const command of [
      "mkdir -p src/x/objects src/x/refs && echo 'ref: refs/heads/main' > src/x/HEAD && git -C src/x status",
      "mkdir -p src/x && echo 'gitdir: ../y' > src/x/.git && cd src/x && git log",
      'cp -r /tmp/elsewhere src/x && git -C src/x status',
      'find src -type d -execdir git status \\;',
      'git -C "$(cat src/dir)" status',
    ]) {
      expect((await bash(guard, command)).effect, command).not.toBe('allow');
    }
    expect((await bash(guard, 'mkdir -p src/lib && git -C src status')).effect).toBe('allow');
  });
});
