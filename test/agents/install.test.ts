import { describe, expect, it } from 'vitest';
import { parseJsonText, JsonSyntaxError } from '../../src/agents/install-json.js';
import { codexHooksTurnedOff, corralInvocation, hookCommandFor, installGuardHook, isCorralHook, settingsTarget, uninstallGuardHook } from '../../src/agents/install.js';
import { UsageError } from '../../src/errors.js';

// The edit of an agent's settings text: corral's hook in once, out exactly, every other
// byte as it was.

const CMD = hookCommandFor('claude-code', 'corral');
const CODEX = hookCommandFor('codex', 'corral');

function roundTrip(original: string, agent: 'claude-code' | 'codex' = 'claude-code'): string {
  const command = agent === 'claude-code' ? CMD : CODEX;
  const installed = installGuardHook(original, agent, command, 'settings.json');
  expect(installed.change).toBe('added');
  expect(() => JSON.parse(installed.text.replace(/^\uFEFF/, ''))).not.toThrow();
  expect(installGuardHook(installed.text, agent, command, 'settings.json')).toEqual({ text: installed.text, change: 'unchanged', removed: 0 });
  const removed = uninstallGuardHook(installed.text, agent, 'settings.json');
  expect(removed.change).toBe('removed');
  expect(removed.removed).toBe(1);
  expect(removed.text).toBe(original);
  return installed.text;
}

const preToolUse = (text: string): unknown[] => (JSON.parse(text) as { hooks: { PreToolUse: unknown[] } }).hooks.PreToolUse;

describe('installGuardHook', () => {
  it('writes a new file with one PreToolUse group that matches every tool', () => {
    const edit = installGuardHook(null, 'claude-code', CMD, '.claude/settings.json');
    expect(edit.change).toBe('added');
    expect(edit.text).toBe(`${JSON.stringify({ hooks: { PreToolUse: [{ matcher: '*', hooks: [{ type: 'command', command: CMD }] }] } }, null, 2)}\n`);
    // Codex matches every tool when the group has no matcher.
    expect(preToolUse(installGuardHook('  \n', 'codex', CODEX, '.codex/hooks.json').text)).toEqual([{ hooks: [{ type: 'command', command: CODEX }] }]);
  });

  it('adds to a formatted file and takes it back to the same bytes: no hooks, other events, other PreToolUse groups', () => {
    const plain = `{\n  "$schema": "https://json.schemastore.org/claude-code-settings.json",\n  "permissions": {\n    "allow": ["Bash(npm test)", "Read"],\n    "deny": []\n  },\n  "model": "opus"\n}\n`;
    const added = roundTrip(plain);
    expect(added).toContain(`  "model": "opus",\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "*",`);
    expect(added.startsWith(plain.slice(0, plain.indexOf('"model"')))).toBe(true);
    expect(Object.keys(JSON.parse(added) as object)).toEqual(['$schema', 'permissions', 'model', 'hooks']);

    const otherEvent = `{\n  "hooks": {\n    "PostToolUse": [\n      { "matcher": "Edit", "hooks": [{ "type": "command", "command": "npx prettier --write" }] }\n    ]\n  }\n}\n`;
    expect(Object.keys((JSON.parse(roundTrip(otherEvent)) as { hooks: object }).hooks)).toEqual(['PostToolUse', 'PreToolUse']);

    const otherGroup = `{\n  "hooks": {\n    "PreToolUse": [\n      {\n        "matcher": "Bash",\n        "hooks": [\n          {\n            "type": "command",\n            "command": "./check.sh"\n          }\n        ]\n      }\n    ]\n  }\n}`;
    const grouped = roundTrip(otherGroup);
    expect(preToolUse(grouped)).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: './check.sh' }] }, { matcher: '*', hooks: [{ type: 'command', command: CMD }] }]);
  });

  it('writes as the file does: four spaces, tabs, CRLF, a one-line file, an empty object, a byte-order mark', () => {
    const four = `{\n    "model": "opus"\n}\n`;
    expect(roundTrip(four)).toContain(`\n    "hooks": {\n        "PreToolUse": [\n            {`);
    const tabs = `{\n\t"hooks": {\n\t\t"PreToolUse": [\n\t\t\t{\n\t\t\t\t"hooks": []\n\t\t\t}\n\t\t]\n\t}\n}\n`;
    expect(roundTrip(tabs)).toContain(`\t\t\t},\n\t\t\t{\n\t\t\t\t"matcher": "*",`);
    // An empty list corral filled goes with corral's hook: what it emptied is removed.
    const emptied = installGuardHook(`{\n  "hooks": {\n    "PreToolUse": []\n  }\n}\n`, 'claude-code', CMD, 's').text;
    expect(uninstallGuardHook(emptied, 'claude-code', 's').text).toBe('{}\n');
    const crlf = `{\r\n  "model": "opus"\r\n}\r\n`;
    expect(roundTrip(crlf).replace(/\r\n/g, '')).not.toContain('\n');
    const oneLine = '{"model":"opus","hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"x"}]}]}}';
    expect(roundTrip(oneLine)).not.toContain('\n');
    roundTrip('{}');
    roundTrip('{}\n');
    expect(roundTrip('\uFEFF{\n  "a": 1\n}\n').startsWith('\uFEFF{')).toBe(true);
  });

  it('is there once: the same command leaves the text alone, another corral command is replaced in place', () => {
    const once = installGuardHook(null, 'claude-code', CMD, 's').text;
    expect(installGuardHook(once, 'claude-code', CMD, 's').change).toBe('unchanged');
    const moved = "'/opt/corral new/bin/corral.cjs' guard hook --agent claude-code";
    const edit = installGuardHook(once, 'claude-code', moved, 's');
    expect(edit).toMatchObject({ change: 'updated', previous: CMD });
    expect(preToolUse(edit.text)).toEqual([{ matcher: '*', hooks: [{ type: 'command', command: moved }] }]);
    // A person narrowed corral's matcher: still corral's hook, still there once.
    const narrowed = JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: CMD }] }] } }, null, 2);
    expect(installGuardHook(narrowed, 'claude-code', CMD, 's').change).toBe('unchanged');
    // Codex's hook in the same file is another agent's.
    expect(installGuardHook(installGuardHook(null, 'codex', CODEX, 's').text, 'claude-code', CMD, 's').change).toBe('added');
  });

  it('refuses what is not JSON, or not shaped as settings, naming the file, line and column', () => {
    const bad = `{\n  "model": "opus",\n  "permissions": { "allow": ["Read",] }\n}\n`;
    expect(() => installGuardHook(bad, 'claude-code', CMD, '.claude/settings.json')).toThrow(UsageError);
    expect(() => installGuardHook(bad, 'claude-code', CMD, '.claude/settings.json')).toThrow(/^\.claude\/settings\.json:3:37: not valid JSON/);
    expect(() => installGuardHook('{\n  // a comment\n}', 'claude-code', CMD, 's')).toThrow(/^s:2:3: not valid JSON/);
    expect(() => installGuardHook('{"a": 1', 'claude-code', CMD, 's')).toThrow(/^s:1:8: not valid JSON.*ends here/);
    expect(() => installGuardHook('{"a": 1}{', 'claude-code', CMD, 's')).toThrow(/^s:1:9: not valid JSON/);
    expect(() => installGuardHook('[]', 'claude-code', CMD, 's')).toThrow(/^s:1:1: agent settings are a JSON object/);
    expect(() => installGuardHook('{\n  "hooks": []\n}', 'claude-code', CMD, 's')).toThrow(/^s:2:12: hooks: hooks is an object/);
    expect(() => installGuardHook('{\n  "hooks": {\n    "PreToolUse": {}\n  }\n}', 'claude-code', CMD, 's')).toThrow(/^s:3:19: hooks\.PreToolUse: /);
    expect(() => uninstallGuardHook('{"hooks": 1}', 'claude-code', 's')).toThrow(/nothing was changed/);
  });
});

describe('uninstallGuardHook', () => {
  it('removes exactly corral\'s hooks, and only the containers that removal emptied', () => {
    const shared = {
      model: 'opus',
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: './lint.sh' }, { type: 'command', command: CMD }] },
          { matcher: '*', hooks: [{ type: 'command', command: "'/usr/bin/node' '/x/bin/corral.cjs' guard hook --agent claude-code" }] },
          { matcher: '*', hooks: [{ type: 'command', command: CODEX }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
      },
    };
    const edit = uninstallGuardHook(JSON.stringify(shared, null, 2), 'claude-code', 's');
    expect(edit.removed).toBe(2);
    expect(JSON.parse(edit.text)).toEqual({
      model: 'opus',
      hooks: {
        PreToolUse: [
          { matcher: 'Bash', hooks: [{ type: 'command', command: './lint.sh' }] },
          { matcher: '*', hooks: [{ type: 'command', command: CODEX }] },
        ],
        Stop: [{ hooks: [{ type: 'command', command: 'say done' }] }],
      },
    });
    const codexGone = uninstallGuardHook(edit.text, 'codex', 's');
    expect(preToolUse(codexGone.text)).toEqual([{ matcher: 'Bash', hooks: [{ type: 'command', command: './lint.sh' }] }]);
  });

  it('changes nothing where there is no corral hook, and takes a custom command by its exact text', () => {
    const text = '{\n  "hooks": {\n    "PreToolUse": [{ "hooks": [{ "type": "command", "command": "my-guard" }] }]\n  }\n}\n';
    expect(uninstallGuardHook(text, 'claude-code', 's')).toEqual({ text, change: 'none', removed: 0 });
    expect(uninstallGuardHook(null, 'claude-code', 's').change).toBe('none');
    expect(uninstallGuardHook(text, 'claude-code', 's', 'my-guard')).toMatchObject({ change: 'removed', text: '{\n}\n'.replace('{\n}', '{}') });
  });
});

describe('the pieces', () => {
  it('knows corral\'s hook commands however corral is named, and nobody else\'s', () => {
    const hook = (command: string) => ({ type: 'command', command });
    expect(isCorralHook(hook('corral guard hook --agent claude-code'), 'claude-code')).toBe(true);
    expect(isCorralHook(hook("'/home/a b/bin/corral.cjs' guard hook --agent claude-code"), 'claude-code')).toBe(true);
    expect(isCorralHook(hook('/usr/bin/node /opt/corral/bin/corral.cjs guard hook --agent=codex'), 'codex')).toBe(true);
    expect(isCorralHook(hook('npx corral guard hook --agent codex'), 'claude-code')).toBe(false);
    expect(isCorralHook(hook('notcorral guard hook --agent claude-code'), 'claude-code')).toBe(false);
    expect(isCorralHook(hook('echo corral guard'), 'claude-code')).toBe(false);
    expect(isCorralHook({ type: 'prompt', command: CMD }, 'claude-code')).toBe(false);
    expect(isCorralHook(hook('my-guard'), 'claude-code', 'my-guard')).toBe(true);
  });

  it('runs corral by name when it is on PATH, else by its path, quoted for the shell', () => {
    expect(corralInvocation({ onPath: true, script: '/x/corral.cjs', scriptExecutable: true, node: '/usr/bin/node' })).toBe('corral');
    expect(corralInvocation({ onPath: false, script: '/x/bin/corral.cjs', scriptExecutable: true, node: '/usr/bin/node' })).toBe('/x/bin/corral.cjs');
    expect(corralInvocation({ onPath: false, script: "/it's here/corral.cjs", scriptExecutable: false, node: '/usr/bin/node' })).toBe(`/usr/bin/node '/it'\\''s here/corral.cjs'`);
  });

  it('finds each agent\'s settings file by scope, and refuses a scope the agent does not have', () => {
    const env = { HOME: '/home/u' };
    expect(settingsTarget('claude-code', 'project', { repo: '/r', env })).toMatchObject({ file: '/r/.claude/settings.json', shown: '.claude/settings.json' });
    expect(settingsTarget('claude-code', 'local', { repo: '/r', env })).toMatchObject({ file: '/r/.claude/settings.local.json', shown: '.claude/settings.local.json' });
    expect(settingsTarget('claude-code', 'user', { repo: null, env })).toMatchObject({ file: '/home/u/.claude/settings.json', shown: '~/.claude/settings.json' });
    expect(settingsTarget('claude-code', 'user', { repo: null, env: { HOME: '/home/u', CLAUDE_CONFIG_DIR: '/cfg' } }).file).toBe('/cfg/settings.json');
    expect(settingsTarget('codex', 'project', { repo: '/r', env })).toMatchObject({ file: '/r/.codex/hooks.json', shown: '.codex/hooks.json' });
    expect(settingsTarget('codex', 'user', { repo: null, env })).toMatchObject({ file: '/home/u/.codex/hooks.json', shown: '~/.codex/hooks.json' });
    expect(settingsTarget('codex', 'user', { repo: null, env: { HOME: '/home/u', CODEX_HOME: '/ch' } }).file).toBe('/ch/hooks.json');
    expect(() => settingsTarget('codex', 'local', { repo: '/r', env })).toThrow(/Codex has no local settings file/);
    expect(() => settingsTarget('claude-code', 'project', { repo: null, env })).toThrow(/not in a git repository/);
  });

  it('sees when a Codex config turns hooks off', () => {
    expect(codexHooksTurnedOff('[features]\nhooks = false\n')).toBe(true);
    expect(codexHooksTurnedOff('model = "o3"\n[features]\ncodex_hooks = false # old name\n')).toBe(true);
    expect(codexHooksTurnedOff('features.hooks = false\n')).toBe(true);
    expect(codexHooksTurnedOff('[features]\nhooks = true\n[other]\nhooks = false\n')).toBe(false);
    expect(codexHooksTurnedOff('')).toBe(false);
  });

  it('parses strict JSON only, with the place of each value', () => {
    const root = parseJsonText('{"a": [1, {"b": null}], "c": "\\u00e9"}');
    expect(root.kind).toBe('object');
    for (const bad of ['{"a": 1,}', "{'a': 1}", '[1 2]', '{"a": 01}', '"\\x"', 'tru', '{"a": NaN}', '"a\tb"']) {
      expect(() => parseJsonText(bad), bad).toThrow(JsonSyntaxError);
    }
  });
});
