import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkTicketFile } from '../../src/ticket/load.js';
import { buildToolEnv, NON_INTERACTIVE, OFFLINE } from '../../src/run/tool-env.js';
import { makeRepo, writeFiles } from './temp-repo.js';

async function check(content: string) {
  const repo = makeRepo();
  writeFiles(repo, { 't.yaml': content });
  return checkTicketFile(path.join(repo, 't.yaml'));
}

describe('a ticket\'s env', () => {
  it('takes a mapping that sets, unsets and passes through, and a list that passes through', async () => {
    const mapping = await check('task: x\nallow: ["**"]\nenv:\n  NO_COLOR: null\n  FORCE_COLOR: 1\n  NPM_TOKEN: true\n  TERM: xterm\n');
    expect(mapping.problems).toEqual([]);
    expect(mapping.ticket?.env).toEqual({ NO_COLOR: null, FORCE_COLOR: '1', NPM_TOKEN: true, TERM: 'xterm' });
    const list = await check('task: x\nallow: ["**"]\nenv: [NPM_TOKEN]\n');
    expect(list.ticket?.env).toEqual({ NPM_TOKEN: true });
  });

  it('names the file, line and field of a value it cannot take, and of corral\'s own key', async () => {
    const shown = async (content: string) => {
      const result = await check(content);
      expect(result.ticket).toBeUndefined();
      return result.problems.map((p) => `${path.basename(p.file)}:${p.line} ${p.field}: ${p.message}`);
    };
    expect(await shown('task: x\nallow: ["**"]\nenv:\n  PATH: /bin\n  NO_COLOR: false\n')).toEqual([expect.stringMatching(/^t\.yaml:5 env\.NO_COLOR: .*write null to unset it/)]);
    expect(await shown('task: x\nallow: ["**"]\nenv:\n  ANTHROPIC_API_KEY: true\n')).toEqual([expect.stringMatching(/^t\.yaml:4 env\.ANTHROPIC_API_KEY: ANTHROPIC_API_KEY is corral's own model key/)]);
    expect(await shown('task: x\nallow: ["**"]\nenv:\n  1X: a\n')).toEqual([expect.stringMatching(/^t\.yaml:4 env\.1X: `1X` is not an environment variable name/)]);
    expect(await shown('task: x\nallow: ["**"]\nenv:\n  A: [x]\n')).toEqual([expect.stringMatching(/^t\.yaml:4 env\.A: expected text/)]);
    const listed = await check('task: x\nallow: ["**"]\nenv: [PATH, ANTHROPIC_AUTH_TOKEN]\n');
    expect(listed.problems.map((p) => `${p.line} ${p.field}`)).toEqual(['3 env.1']);
  });
});

describe('a ticket\'s network', () => {
  it('is on for setup and off for the agent unless said otherwise', async () => {
    const net = async (lines: string) => (await check(`task: x\nallow: ["**"]\n${lines}`)).ticket;
    expect(await net('')).toMatchObject({ setupNetwork: true, network: false });
    expect(await net('network: false\n')).toMatchObject({ setupNetwork: true, network: false });
    expect(await net('network: true\n')).toMatchObject({ setupNetwork: true, network: true });
    expect(await net('network: {setup: false}\n')).toMatchObject({ setupNetwork: false, network: false });
    expect(await net('setup_network: false\nnetwork: true\n')).toMatchObject({ setupNetwork: false, network: true });
    const clash = await check('task: x\nallow: ["**"]\nsetup_network: false\nnetwork: {setup: true}\n');
    expect(clash.problems.map((p) => `${p.line} ${p.field}`)).toEqual(['3 setup_network']);
  });
});

describe('the tools\' environment', () => {
  const host = { PATH: '/usr/bin:/bin', HOME: '/home/u', NO_COLOR: undefined, ANTHROPIC_API_KEY: 'sk-ant-secret', FORCE_COLOR: '3' };

  it('adds only the non-interactive variables, and env changes or unsets every one of them', () => {
    const plain = buildToolEnv(host, {}, { tmpDir: '/tmp/run' });
    expect(plain).toMatchObject({ ...NON_INTERACTIVE, TMPDIR: '/tmp/run' });
    expect(plain).not.toHaveProperty('FORCE_COLOR');
    expect(plain).not.toHaveProperty('ANTHROPIC_API_KEY');
    const unset = Object.fromEntries([...Object.keys(NON_INTERACTIVE), ...Object.keys(OFFLINE), 'TMPDIR', 'PATH', 'HOME'].map((name) => [name, null]));
    const changed = buildToolEnv(host, { ...unset, FORCE_COLOR: true, TERM: 'xterm-256color' }, { tmpDir: '/tmp/run', offline: true });
    for (const name of Object.keys(unset).filter((n) => n !== 'TERM')) expect(changed).not.toHaveProperty(name);
    expect(changed).toMatchObject({ FORCE_COLOR: '3', TERM: 'xterm-256color' });
  });

  it('tells package managers they are offline only without the network', () => {
    expect(buildToolEnv(host, {}, { tmpDir: '/t', offline: true })).toMatchObject(OFFLINE);
    expect(buildToolEnv(host, {}, { tmpDir: '/t' })).not.toHaveProperty('npm_config_offline');
    expect(buildToolEnv(host, { npm_config_offline: 'false' }, { tmpDir: '/t', offline: true })).toMatchObject({ npm_config_offline: 'false' });
  });

  it('never passes corral\'s own key, whatever env says', () => {
    expect(buildToolEnv(host, { ANTHROPIC_API_KEY: true }, { tmpDir: '/t' })).not.toHaveProperty('ANTHROPIC_API_KEY');
  });
});
