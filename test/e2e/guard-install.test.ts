import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT, runCli } from '../support/cli.js';
import { repoWithFiles, tempDir } from '../support/repo.js';

// `corral guard install|uninstall` through the real CLI, on real repositories and a
// temp HOME: what it writes, that it writes it once, that uninstall gives the bytes back,
// and that a broken file is refused and left alone.

const BIN = path.join(PROJECT_ROOT, 'bin', 'corral.cjs');
/** corral is not on this PATH: the hook names the running corral by its path. */
const PATH_WITHOUT_CORRAL = [path.dirname(process.execPath), '/usr/bin', '/bin'].join(path.delimiter);

const FORMATTED = `{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm run test:*)", "Read"],
    "deny": ["Read(./.env)"]
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "Edit|Write",
        "hooks": [{ "type": "command", "command": "npx prettier --write" }]
      }
    ]
  },
  "env": { "FOO": "1" }
}
`;

function hooksOf(file: string): { PreToolUse?: { matcher?: string; hooks: { type: string; command: string }[] }[] } {
  return (JSON.parse(readFileSync(file, 'utf8')) as { hooks: never }).hooks;
}

/** Whether `after` is `before` with one run of text put in somewhere: every byte of `before` kept, in order, around it. */
function isInsertionInto(before: string, after: string): boolean {
  let common = 0;
  while (common < before.length && before[common] === after[common]) common += 1;
  return after.length > before.length && after.endsWith(before.slice(common));
}

describe('corral guard install and uninstall', () => {
  it('adds the hook to the project\'s Claude Code settings once, and uninstall gives back the same bytes', async () => {
    const repo = repoWithFiles({ '.claude/settings.json': FORMATTED });
    const file = path.join(repo, '.claude', 'settings.json');
    chmodSync(file, 0o640);
    const env = { PATH: PATH_WITHOUT_CORRAL };
    const first = await runCli(['guard', 'install'], { cwd: path.join(repo), env });
    expect(first.stderr).toBe('');
    expect(first.exitCode).toBe(0);
    const command = `${BIN} guard hook --agent claude-code`;
    expect(first.stdout).toContain(`added corral's guard to .claude/settings.json: PreToolUse runs ${command}`);
    expect(first.stdout).toContain('note: corral is not on PATH');
    expect(hooksOf(file).PreToolUse).toEqual([{ matcher: '*', hooks: [{ type: 'command', command }] }]);
    expect(isInsertionInto(FORMATTED, readFileSync(file, 'utf8'))).toBe(true);
    expect(statSync(file).mode & 0o777).toBe(0o640);

    // corral's own runs read this file too, and leave the guard's hook to the guard they already have.
    const config = await runCli(['config'], { cwd: repo, env });
    expect(config.stdout).toContain("hooks.PreToolUse.0.hooks.0 (corral's own guard, which judges every call of a run already)");
    expect(config.stdout).not.toMatch(/PreToolUse\s+\*\s+.*guard hook/);

    const again = await runCli(['guard', 'install', '--claude-code'], { cwd: repo, env });
    expect(again.exitCode).toBe(0);
    expect(again.stdout).toContain("corral's guard is already in .claude/settings.json");
    expect(hooksOf(file).PreToolUse).toHaveLength(1);

    const removed = await runCli(['guard', 'uninstall'], { cwd: repo, env });
    expect(removed.exitCode).toBe(0);
    expect(removed.stdout).toContain("removed corral's guard from .claude/settings.json (1 hook)");
    expect(readFileSync(file, 'utf8')).toBe(FORMATTED);
    // No temp file left beside it.
    expect(readdirSync(path.dirname(file))).toEqual(['settings.json']);

    const nothing = await runCli(['guard', 'uninstall'], { cwd: repo, env });
    expect(nothing.stdout).toContain('no corral guard in .claude/settings.json; nothing to remove');
    expect(readFileSync(file, 'utf8')).toBe(FORMATTED);
  });

  it('makes the folder and file when missing, at each scope: local in the repository, user in HOME', async () => {
    const repo = repoWithFiles({ 'README.md': 'x\n' });
    const home = tempDir('corral-home-');
    const env = { HOME: home, CLAUDE_CONFIG_DIR: undefined, CODEX_HOME: undefined, PATH: PATH_WITHOUT_CORRAL };
    const local = await runCli(['guard', 'install', '--scope', 'local', '--command', 'npx corral guard hook --agent claude-code'], { cwd: repo, env });
    expect(local.exitCode).toBe(0);
    expect(local.stdout).toContain("added corral's guard to .claude/settings.local.json (a new file): PreToolUse runs npx corral guard hook --agent claude-code");
    expect(local.stdout).toContain('note: .claude/settings.local.json is yours alone: keep it out of git');
    expect(hooksOf(path.join(repo, '.claude', 'settings.local.json')).PreToolUse).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: 'npx corral guard hook --agent claude-code' }] }]);

    const user = await runCli(['guard', 'install', '--scope', 'user'], { cwd: repo, env });
    expect(user.exitCode).toBe(0);
    expect(user.stdout).toContain("added corral's guard to ~/.claude/settings.json (a new file)");
    expect(hooksOf(path.join(home, '.claude', 'settings.json')).PreToolUse?.[0]?.hooks[0]?.command).toBe(`${BIN} guard hook --agent claude-code`);
    const userOut = await runCli(['guard', 'uninstall', '--scope', 'user'], { cwd: repo, env });
    expect(userOut.stdout).toContain("removed corral's guard from ~/.claude/settings.json (1 hook)");
    expect(readFileSync(path.join(home, '.claude', 'settings.json'), 'utf8')).toBe('{}\n');
    // Nothing in the repository for the user scope.
    expect(existsSync(path.join(repo, '.claude', 'settings.json'))).toBe(false);
  });

  it('writes Codex\'s hooks.json, project and user, and says a hook must be trusted in Codex', async () => {
    const repo = repoWithFiles({ '.codex/config.toml': '[features]\nhooks = false\n' });
    const home = tempDir('corral-home-');
    const env = { HOME: home, CODEX_HOME: undefined, CLAUDE_CONFIG_DIR: undefined, PATH: PATH_WITHOUT_CORRAL };
    const project = await runCli(['guard', 'install', '--codex', '--command', 'corral guard hook --agent codex'], { cwd: repo, env });
    expect(project.exitCode).toBe(0);
    expect(project.stdout).toContain("added corral's guard to .codex/hooks.json (a new file): PreToolUse runs corral guard hook --agent codex");
    expect(project.stdout).toContain('open /hooks in Codex');
    expect(project.stdout).toContain("warning: .codex/config.toml turns Codex's hooks off");
    expect(hooksOf(path.join(repo, '.codex', 'hooks.json')).PreToolUse).toEqual([{ hooks: [{ type: 'command', command: 'corral guard hook --agent codex' }] }]);
    // Both agents at once, at the user scope.
    const both = await runCli(['guard', 'install', '--codex', '--claude-code', '--scope', 'user'], { cwd: repo, env });
    expect(both.exitCode).toBe(0);
    expect(existsSync(path.join(home, '.codex', 'hooks.json'))).toBe(true);
    expect(existsSync(path.join(home, '.claude', 'settings.json'))).toBe(true);
    const out = await runCli(['guard', 'uninstall', '--codex'], { cwd: repo, env });
    expect(out.stdout).toContain("removed corral's guard from .codex/hooks.json (1 hook)");
  });

  it('names corral by name when it is on PATH', async () => {
    const repo = repoWithFiles({ 'README.md': 'x\n' });
    const bin = tempDir('corral-bin-');
    symlinkSync(BIN, path.join(bin, 'corral'));
    const result = await runCli(['guard', 'install'], { cwd: repo, env: { PATH: `${bin}${path.delimiter}${PATH_WITHOUT_CORRAL}` } });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("added corral's guard to .claude/settings.json (a new file): PreToolUse runs corral guard hook --agent claude-code");
    const both = await runCli(['guard', 'install', '--claude-code', '--codex', '--command', 'x'], { cwd: repo, env: {} });
    expect(both.exitCode).toBe(64);
    expect(both.stderr).toContain('--command names one agent');
  });

  it('edits the target of a symlinked settings file and keeps the link', async () => {
    const repo = repoWithFiles({ 'README.md': 'x\n' });
    const dotfiles = tempDir('corral-dotfiles-');
    writeFileSync(path.join(dotfiles, 'claude.json'), FORMATTED);
    mkdirSync(path.join(repo, '.claude'));
    symlinkSync(path.join(dotfiles, 'claude.json'), path.join(repo, '.claude', 'settings.json'));
    const result = await runCli(['guard', 'install', '--command', 'corral guard hook --agent claude-code'], { cwd: repo, env: {} });
    expect(result.exitCode).toBe(0);
    expect(hooksOf(path.join(dotfiles, 'claude.json')).PreToolUse).toHaveLength(1);
    await runCli(['guard', 'uninstall'], { cwd: repo, env: {} });
    expect(readFileSync(path.join(dotfiles, 'claude.json'), 'utf8')).toBe(FORMATTED);
  });

  it('refuses a file that is not valid JSON, naming file and line, and leaves it as it is', async () => {
    const broken = '{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}\n';
    const repo = repoWithFiles({ '.claude/settings.json': broken });
    for (const verb of ['install', 'uninstall']) {
      const result = await runCli(['guard', verb], { cwd: repo, env: {} });
      expect(result.exitCode).toBe(64);
      expect(result.stderr).toMatch(/^corral: \.claude\/settings\.json:3:22: not valid JSON: .*nothing was changed/);
      expect(result.stdout).toBe('');
      expect(readFileSync(path.join(repo, '.claude', 'settings.json'), 'utf8')).toBe(broken);
    }
  });

  it('says which file it cannot read or write, and changes nothing', async () => {
    const repo = repoWithFiles({ 'README.md': 'x\n' });
    // .claude is a file: nothing can be made below it.
    writeFileSync(path.join(repo, '.claude'), 'not a folder\n');
    const blocked = await runCli(['guard', 'install'], { cwd: repo, env: {} });
    expect(blocked.exitCode).toBe(64);
    expect(blocked.stderr).toMatch(/^corral: cannot (read|write) \.claude\/settings\.json: E[A-Z]+/);
    expect(readFileSync(path.join(repo, '.claude'), 'utf8')).toBe('not a folder\n');
  });

  it('is a usage error for a scope an agent lacks, an unknown scope, or project scope outside a repository', async () => {
    const repo = repoWithFiles({ 'README.md': 'x\n' });
    const local = await runCli(['guard', 'install', '--codex', '--scope', 'local'], { cwd: repo, env: {} });
    expect(local.exitCode).toBe(64);
    expect(local.stderr).toContain('Codex has no local settings file');
    const unknown = await runCli(['guard', 'install', '--scope', 'team'], { cwd: repo, env: {} });
    expect(unknown.exitCode).toBe(64);
    const outside = await runCli(['guard', 'install'], { cwd: tempDir('corral-nogit-'), env: {} });
    expect(outside.exitCode).toBe(64);
    expect(outside.stderr).toContain('not in a git repository');
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
  });
});
