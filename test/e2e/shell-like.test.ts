import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { probeBubblewrap } from '../../src/guard/sandbox/probe.js';
import { runCli, runReport } from '../support/cli.js';
import { commitFiles, repoWithFiles, tempDir } from '../support/repo.js';

// Setup, checks and the agent's commands as the developer's shell runs them: the
// environment corral adds can be undone by `env`, setup has the network and a package
// cache that outlives the run, node_modules is reused by lockfile, and without the
// network package managers are told they are offline.

const probe = await probeBubblewrap();

type TraceEvent = Record<string, unknown> & { type: string };

function traceOf(report: { trace: string }): TraceEvent[] {
  return readFileSync(report.trace, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TraceEvent);
}

function setupOutputs(report: { trace: string }): string[] {
  return traceOf(report)
    .filter((event) => event.type === 'setup')
    .map((event) => String(event.output));
}

const NOTHING = 'turns:\n  - text: Done.\n';

/** What kleur's own tests check of their environment: colour is decided by the tests, not told off. */
const COLOUR_CHECK = `
const told = ['NO_COLOR', 'CI', 'NODE_DISABLE_COLORS'].filter((name) => name in process.env);
if (process.env.TERM === 'dumb') told.push('TERM=dumb');
if (told.length > 0) { console.error('colour turned off by ' + told.join(', ')); process.exit(1); }
console.log('colours on');
`;

let server: Server | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

function repoFor(ticket: string, files: Record<string, string> = {}): string {
  return repoWithFiles({ 'ticket.yaml': ticket, 'replay.yaml': NOTHING, '.gitignore': 'node_modules/\n', ...files });
}

describe('the tools\' environment', () => {
  it('is what corral adds, and env in the ticket or corral.yaml changes or unsets each variable', async () => {
    const ticket = (env: string) => ['task: run the tests', 'allow: ["**"]', 'allow_empty: true', 'checks: [node colour.js, "env | sort; exit 7"]', 'sandbox: auto', 'model: replay:replay.yaml', env, ''].join('\n');
    const plain = repoFor(ticket(''), { 'colour.js': COLOUR_CHECK });
    const failed = runReport((await runCli(['run', 'ticket.yaml', '--json'], { cwd: plain })).stdout);
    expect(failed.status).toBe('failed');
    const checks = traceOf(failed).filter((event) => event.type === 'check');
    expect(String(checks[0]!.output)).toContain('colour turned off by NO_COLOR, CI, TERM=dumb');
    // Exactly the documented variables, and nothing of corral's own environment.
    const names = String(checks[1]!.output).split('\n').map((line) => line.split('=')[0]);
    for (const name of ['TERM', 'NO_COLOR', 'CI', 'PAGER', 'GIT_TERMINAL_PROMPT', 'TMPDIR', 'GIT_CONFIG_COUNT']) expect(names).toContain(name);
    expect(names).not.toContain('ANTHROPIC_API_KEY');
    expect(names).not.toContain('XDG_CONFIG_HOME');

    const unset = repoFor(ticket('env: {NO_COLOR: null, CI: null, TERM: xterm-256color, FORCE_COLOR: "1"}'), { 'colour.js': COLOUR_CHECK });
    const passed = runReport((await runCli(['run', 'ticket.yaml', '--json'], { cwd: unset })).stdout);
    expect(traceOf(passed).filter((event) => event.type === 'check')[0]).toMatchObject({ passed: true });

    // The same from the project's config, which a ticket's env can still override.
    const configured = repoFor(ticket(''), { 'colour.js': COLOUR_CHECK, 'corral.yaml': 'env:\n  NO_COLOR: null\n  CI: null\n  TERM: null\n' });
    const colourCheck = async () => traceOf(runReport((await runCli(['run', 'ticket.yaml', '--json'], { cwd: configured })).stdout)).filter((event) => event.type === 'check')[0];
    expect(await colourCheck()).toMatchObject({ passed: true });
    commitFiles(configured, { 'ticket.yaml': ticket('env: {CI: "true"}') });
    expect(await colourCheck()).toMatchObject({ passed: false, output: expect.stringContaining('colour turned off by CI') });
  });

  it('names the config file, line and field of an env entry it cannot take', async () => {
    const repo = repoFor(['task: x', 'allow: ["**"]', 'model: replay:replay.yaml', ''].join('\n'), { 'corral.yaml': 'sandbox: none\nenv:\n  NO_COLOR: false\n' });
    const run = await runCli(['run', 'ticket.yaml'], { cwd: repo });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toMatch(/corral\.yaml:3:\d+: env\.NO_COLOR: false is not a value/);
  });

  it('never hands corral\'s own model key to a command, whatever env says', async () => {
    const repo = repoFor(['task: x', 'allow: ["**"]', 'env: [ANTHROPIC_API_KEY]', 'model: replay:replay.yaml', ''].join('\n'));
    const run = await runCli(['run', 'ticket.yaml'], { cwd: repo, env: { ANTHROPIC_API_KEY: 'sk-ant-api03-fake-never-passed-0123456789' } });
    expect(run.exitCode).toBe(64);
    expect(run.stderr).toContain("ANTHROPIC_API_KEY is corral's own model key");
  });
});

describe.skipIf(!probe.ok)('setup in bubblewrap', () => {
  /** A TCP server on 127.0.0.1, outside every sandbox's network namespace. */
  async function listen(): Promise<number> {
    server = createServer((socket) => socket.end('hello from outside\n'));
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no port');
    return address.port;
  }

  const connect = (port: number) => `node -e "require('net').connect(${port}, '127.0.0.1').on('data', (d) => process.stdout.write(d)).on('error', (e) => { console.error(e.code); process.exit(3) })"`;

  it('has the network by default and a writable package cache; a ticket can turn the network off', async () => {
    const port = await listen();
    const cacheHome = tempDir('corral-cache-home-');
    const ticket = (network: string) =>
      [
        'task: x',
        'allow: ["**"]',
        'allow_empty: true',
        `setup: ["${connect(port).replace(/"/g, '\\"')}", "mkdir -p \\"$npm_config_cache\\" && echo cached > \\"$npm_config_cache/entry\\" && test -z \\"$npm_config_offline\\""]`,
        // The agent's side has no network, and package managers know it.
        `checks: ["test \\"$npm_config_offline\\" = true && test \\"$PIP_NO_INDEX\\" = 1 && test \\"$YARN_ENABLE_OFFLINE_MODE\\" = 1 && ! ${connect(port).replace(/"/g, '\\"')}", "npx --yes corral-no-such-package 2>&1 | grep ENOTCACHED"]`,
        'sandbox: bwrap',
        'model: replay:replay.yaml',
        network,
        '',
      ].join('\n');
    const repo = repoFor(ticket(''));
    const run = await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { XDG_CACHE_HOME: cacheHome } });
    const report = runReport(run.stdout);
    expect(report.reason).not.toContain('setup');
    expect(report.status).toBe('passed');
    expect(setupOutputs(report)[0]).toContain('hello from outside');
    // npx says at once that it is offline, rather than failing on DNS after a minute.
    expect(traceOf(report).filter((event) => event.type === 'check').map((event) => event.passed)).toEqual([true, true]);
    expect(traceOf(report).find((event) => event.type === 'sandbox')).toMatchObject({ kind: 'bwrap', network: false, setupNetwork: true });
    const [cache] = readdirSync(path.join(cacheHome, 'corral', 'repos'));
    expect(readFileSync(path.join(cacheHome, 'corral', 'repos', cache!, 'packages', 'npm', 'entry'), 'utf8')).toBe('cached\n');

    commitFiles(repo, { 'ticket.yaml': ticket('network: {setup: false}') });
    const offline = runReport((await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { XDG_CACHE_HOME: cacheHome } })).stdout);
    expect(offline.status).toBe('failed');
    expect(offline.reason).toContain('setup command');
    expect(setupOutputs(offline)[0]).not.toContain('hello from outside');
  });

  it('gets the node_modules an earlier setup made from the same lockfile, as a copy', async () => {
    const cacheHome = tempDir('corral-cache-home-');
    const setup = 'if [ -e node_modules/dep/made ]; then echo "REUSED $(cat node_modules/dep/made)"; else mkdir -p node_modules/dep && echo first > node_modules/dep/made && echo FRESH; fi';
    const ticket = ['task: x', 'allow: ["**"]', 'allow_empty: true', `setup: [${JSON.stringify(setup)}]`, 'sandbox: bwrap', 'model: replay:replay.yaml', ''].join('\n');
    // The agent writes into the node_modules it got: no later run may see that.
    const tamper = 'turns:\n  - tools:\n      - Bash: {command: "echo tampered > node_modules/dep/made"}\n  - text: Done.\n';
    const repo = repoFor(ticket, { 'package.json': '{"name": "x"}\n', 'package-lock.json': '{"lockfileVersion": 3}\n', 'replay.yaml': tamper });
    const once = async () => setupOutputs(runReport((await runCli(['run', 'ticket.yaml', '--json'], { cwd: repo, env: { XDG_CACHE_HOME: cacheHome } })).stdout))[0]!.trim();
    expect(await once()).toBe('FRESH');
    expect(await once()).toBe('REUSED first');
    expect(await once()).toBe('REUSED first');
    commitFiles(repo, { 'package-lock.json': '{"lockfileVersion": 3, "packages": {}}\n' });
    expect(await once()).toBe('FRESH');

    // `corral clean --caches` clears it.
    const clean = await runCli(['clean', '--caches'], { cwd: repo, env: { XDG_CACHE_HOME: cacheHome } });
    expect(clean.exitCode).toBe(0);
    expect(existsSync(path.join(cacheHome, 'corral', 'repos')) ? readdirSync(path.join(cacheHome, 'corral', 'repos')) : []).toEqual([]);
    expect(await once()).toBe('FRESH');
  });
});
