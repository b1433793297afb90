import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatGitConfig, parseGitConfigList, sanitiseGitConfig, withoutUserinfo } from '../../src/guard/sandbox/git-config.js';
import { toolchainTrees } from '../../src/guard/sandbox/home-view.js';

// The repository config the agent's git sees in the sandbox (an allow-list of the host's),
// and which folders of PATH under a hidden home stay visible.

const made: string[] = [];
afterAll(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function temp(): string {
  const dir = realpathSync(mkdtempSync(path.join(tmpdir(), 'corral-gitcfg-')));
  made.push(dir);
  return dir;
}

/** The entries git itself reads from `text`, as `git config --list -z` gives them. */
function gitList(text: string): string {
  const file = path.join(temp(), 'config');
  writeFileSync(file, text);
  return execFileSync('git', ['config', '--no-includes', '--file', file, '--list', '-z'], { encoding: 'utf8' });
}

const HOST_CONFIG = `[core]
	repositoryformatversion = 0
	filemode = true
	bare = true
	worktree = /elsewhere
	fsmonitor = ./run-me
	hooksPath = ./hooks
	sshCommand = ssh -o ProxyCommand=evil
	askPass = ./askpass
	pager = ./pager
	editor = ./editor
[extensions]
	objectFormat = sha256
	worktreeConfig = true
[include]
	path = ../../evil.inc
[includeIf "gitdir:/"]
	path = ../../evil.inc
[remote "origin"]
	url = https://x-access-token:ghs_TOKEN@github.com/o/r.git
	pushurl = https://ghp_TOKEN2@github.com/o/r.git
	fetch = +refs/heads/*:refs/remotes/origin/*
	uploadpack = ./run-me
	receivepack = ./run-me
[remote "mirror"]
	url = git@github.com:o/r.git
[remote "scp"]
	url = user:hunter2@example.com:o/r.git
[http "https://github.com/"]
	extraheader = AUTHORIZATION: basic dG9rZW4=
[http]
	proxy = http://u:p@proxy:3128
[https]
	sslKey = /secret.key
[credential]
	helper = store
[credential "https://github.com"]
	username = me
[filter "lfs"]
	clean = ./run-me %f
	smudge = ./run-me %f
	required = true
[diff]
	external = ./run-me
	renames = copies
[diff "bin"]
	textconv = ./run-me
	command = ./run-me
[merge "ours"]
	driver = ./run-me
[merge]
	conflictStyle = diff3
[gpg]
	program = ./run-me
[gpg "ssh"]
	program = ./run-me
[sequence]
	editor = ./run-me
[uploadpack]
	packObjectsHook = ./run-me
[protocol "ext"]
	allow = always
[alias]
	st = status --short
	owned = !./run-me
	sneaky = "  !./run-me"
[branch "main"]
	remote = origin
	merge = refs/heads/main
[submodule "lib"]
	url = https://u:pw@example.com/lib.git
	update = !./run-me
[url "https://u:pw@example.com/"]
	insteadOf = https://example.com/
[user]
	name = Repo User
[core]
	autocrlf = input
`;

describe('sanitiseGitConfig', () => {
  it('keeps only harmless keys, URLs without credentials, and forces a non-bare gitdir that never repacks', () => {
    const kept = sanitiseGitConfig(parseGitConfigList(gitList(HOST_CONFIG)));
    expect(kept.map((e) => `${e.key}=${e.value}`)).toEqual([
      'core.repositoryformatversion=0',
      'core.filemode=true',
      'extensions.objectformat=sha256',
      'remote.origin.url=https://github.com/o/r.git',
      'remote.origin.pushurl=https://github.com/o/r.git',
      'remote.origin.fetch=+refs/heads/*:refs/remotes/origin/*',
      'remote.mirror.url=git@github.com:o/r.git',
      'remote.scp.url=example.com:o/r.git',
      'diff.renames=copies',
      'merge.conflictstyle=diff3',
      'alias.st=status --short',
      'branch.main.remote=origin',
      'branch.main.merge=refs/heads/main',
      'submodule.lib.url=https://example.com/lib.git',
      'user.name=Repo User',
      'core.autocrlf=input',
      'core.bare=false',
      'gc.auto=0',
      'maintenance.auto=false',
    ]);
  });

  it('writes a file git reads back to the same entries, whatever the quotes, backslashes and newlines', () => {
    const entries = [
      { key: 'user.name', value: 'A "quoted" \\ name\twith tab' },
      { key: 'branch.we"ird\\name.description', value: 'line one\nline two' },
      { key: 'core.filemode', value: null },
    ];
    const text = formatGitConfig(entries);
    expect(parseGitConfigList(gitList(text))).toEqual(entries);
  });
});

describe('withoutUserinfo', () => {
  it.each([
    ['https://user:pass@host/r.git', 'https://host/r.git'],
    ['https://ghp_token@host/r.git', 'https://host/r.git'],
    ['HTTP://u:p@host:8080', 'HTTP://host:8080'],
    ['https://host/path@v1', 'https://host/path@v1'],
    ['ssh://git@host/r.git', 'ssh://git@host/r.git'],
    ['ssh://git:pw@host/r.git', 'ssh://host/r.git'],
    ['git@host:r.git', 'git@host:r.git'],
    ['u:pw@host:r.git', 'host:r.git'],
    ['/srv/repos/r.git', '/srv/repos/r.git'],
  ])('%s → %s', (url, expected) => expect(withoutUserinfo(url)).toBe(expected));
});

describe('toolchainTrees', () => {
  it('shows a bin or shims folder with its toolchain, but never the home or a folder that only groups others', () => {
    const home = temp();
    const dirs = ['.pyenv/shims', '.cargo/bin', '.rustup/toolchains', '.local/bin', '.local/lib', '.nvm/versions/node/v20/bin', 'bin', 'go/bin', '.deno/bin/sub'];
    for (const dir of dirs) mkdirSync(path.join(home, dir), { recursive: true });
    const searchPath = ['.pyenv/shims', '.cargo/bin', '.local/bin', '.nvm/versions/node/v20/bin', 'bin', 'go/bin', '.deno/bin/sub', 'missing/bin']
      .map((dir) => path.join(home, dir))
      .concat(['relative/bin', '/usr/bin'])
      .join(':');
    const shown = toolchainTrees(searchPath, [home]).map((tree) => path.relative(home, tree.target));
    expect(shown).toEqual(['.pyenv', '.cargo', '.rustup', '.local/bin', '.local/lib', '.nvm/versions/node/v20', 'bin', 'go', '.deno/bin/sub']);
  });

  it('shows a link on PATH in the hidden home at its own place, from where it points', () => {
    const home = temp();
    const elsewhere = path.join(temp(), 'tools');
    mkdirSync(elsewhere);
    execFileSync('ln', ['-s', elsewhere, path.join(home, 'tools')]);
    expect(toolchainTrees(path.join(home, 'tools'), [home])).toEqual([{ source: elsewhere, target: path.join(home, 'tools') }]);
  });
});
