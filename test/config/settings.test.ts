import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { costUsd } from '../../src/config/prices.js';
import { loadConfig, userConfigFile } from '../../src/config/load.js';
import { applySettings, priceTable, settingsFrom } from '../../src/config/settings.js';
import { decideRunStart } from '../../src/guard/run-start.js';
import { runStartRules, stackPolicies } from '../../src/policy/stack.js';
import { DEFAULT_BUDGET, type Ticket } from '../../src/ticket/types.js';

let dir: string;
let home: string;
let repo: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'corral-config-'));
  home = path.join(dir, 'home');
  repo = path.join(dir, 'repo');
  await mkdir(path.join(home, '.config', 'corral'), { recursive: true });
  await mkdir(repo, { recursive: true });
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const env = (): NodeJS.ProcessEnv => ({ HOME: home });
const userFile = (): string => path.join(home, '.config', 'corral', 'config.yaml');

function ticket(extra: Partial<Ticket> = {}): Ticket {
  return {
    file: path.join(repo, 't.yaml'),
    id: 't',
    repo,
    base: 'HEAD',
    task: 'x',
    allow: ['src/**'],
    forbid: [],
    setup: [],
    checks: [],
    budget: DEFAULT_BUDGET,
    checkRounds: 2,
    agent: 'corral',
    allowEmpty: false,
    labels: [],
    env: {},
    sandbox: 'auto',
    sandboxChosen: false,
    sandboxRead: [],
    sandboxExpose: [],
    network: false,
    setupNetwork: true,
    given: { budget: {} },
    ...extra,
  };
}

describe('finding the user config', () => {
  it('uses $XDG_CONFIG_HOME when it is absolute, else ~/.config', () => {
    expect(userConfigFile({ HOME: '/h', XDG_CONFIG_HOME: '/x' })).toBe('/x/corral/config.yaml');
    expect(userConfigFile({ HOME: '/h', XDG_CONFIG_HOME: 'relative' })).toBe('/h/.config/corral/config.yaml');
    expect(userConfigFile({ HOME: '/h' })).toBe('/h/.config/corral/config.yaml');
    expect(userConfigFile({})).toBeNull();
  });
});

describe('stacking user and project config', () => {
  it('lets the project win single values, adds up aliases, and names the file and line of each', async () => {
    await writeFile(userFile(), 'model: fast\nmodels:\n  fast: claude-haiku-4-5\n  strong: claude-sonnet-4-5\nbudget:\n  steps: 10\n  minutes: 5\n');
    await writeFile(path.join(repo, 'corral.yaml'), 'models:\n  strong: claude-opus-4-5\nbudget:\n  minutes: 20\nsandbox: none\n');
    const loaded = await loadConfig(repo, env(), repo);
    expect(loaded.problems).toEqual([]);
    const settings = settingsFrom(loaded);
    expect(settings.model).toEqual({ value: 'fast', from: 'user ~/.config/corral/config.yaml:1' });
    expect(settings.aliases.strong).toEqual({ value: 'claude-opus-4-5', from: 'project corral.yaml:2' });
    expect(settings.aliases.fast?.value).toBe('claude-haiku-4-5');
    expect(settings.budget.minutes).toEqual({ value: 20, from: 'project corral.yaml:4' });
    expect(settings.sandbox.value).toBe('none');

    // The ticket's own fields win; what it leaves out comes from config, then the defaults.
    const applied = applySettings(ticket({ given: { budget: { steps: 3 } } }), settings, { shownFile: 't.yaml' });
    expect(applied.problems).toEqual([]);
    expect(applied.ticket.model).toBe('claude-haiku-4-5');
    expect(applied.ticket.budget).toEqual({ ...DEFAULT_BUDGET, steps: 3, minutes: 20 });
    expect(applied.ticket.sandbox).toBe('none');
    expect(applySettings(ticket({ model: 'strong' }), settings, { shownFile: 't.yaml' }).ticket.model).toBe('claude-opus-4-5');
    expect(applySettings(ticket({ model: 'strong' }), settings, { shownFile: 't.yaml', modelOverride: 'claude-sonnet-4-6' }).ticket.model).toBe('claude-sonnet-4-6');
    // Applying twice changes nothing: an alias never names another alias.
    expect(applySettings(applied.ticket, settings, { shownFile: 't.yaml' }).ticket).toEqual(applied.ticket);
  });

  it('refuses a model name that looks like an alias when no config defines it', async () => {
    const settings = settingsFrom(await loadConfig(repo, env(), repo));
    const { problems } = applySettings(ticket({ model: 'fast' }), settings, { shownFile: 't.yaml' });
    expect(problems).toEqual([expect.objectContaining({ file: 't.yaml', field: 'model', message: expect.stringContaining('`fast` is not a model id') })]);
  });

  it('stacks policies so a deny in the user config beats an allow in the project, each rule naming its line', async () => {
    await writeFile(userFile(), 'policy:\n  deny:\n    - Bash(git push:*)\n');
    await writeFile(path.join(repo, 'corral.yaml'), 'policy:\n  allow:\n    - Bash(git push:*)\n  rules:\n    - id: prod\n      hook: run.start\n      when: \'"prod" in ticket.labels\'\n      effect: deny\n');
    const settings = settingsFrom(await loadConfig(repo, env(), repo));
    const policy = stackPolicies(settings.policyLayers);
    expect(policy.rules.map((rule) => [rule.effect, rule.scope, rule.source])).toEqual([
      ['deny', 'user', '~/.config/corral/config.yaml:3'],
      ['allow', 'project', 'corral.yaml:3'],
    ]);
    expect(settings.runStart.map((rule) => [rule.id, rule.source])).toEqual([['prod', 'corral.yaml:5']]);
    expect(decideRunStart(settings.runStart, ticket({ labels: ['prod'] }))).toMatchObject({ effect: 'deny', rule: 'prod', scope: 'project' });
    expect(decideRunStart(settings.runStart, ticket({ labels: ['dev'] }))).toBeNull();
  });

  it('treats a run.start condition that cannot be evaluated as matching a deny, never an allow', () => {
    const rules = runStartRules([
      { scope: 'project', file: { rules: [{ id: 'broken-allow', hook: 'run.start', when: 'ticket.nothing.here', effect: 'allow' }] } },
      { scope: 'project', file: { rules: [{ id: 'broken-deny', hook: 'run.start', when: 'ticket.nothing.here', effect: 'deny' }] } },
    ]);
    const decision = decideRunStart(rules, ticket());
    expect(decision).toMatchObject({ effect: 'deny', rule: 'broken-deny' });
    expect(decision?.reason).toContain('could not be evaluated');
    expect(decideRunStart(rules.slice(0, 1), ticket())).toBeNull();
  });

  it('adds prices for unknown models, with cache prices from the usual ratios', async () => {
    await writeFile(path.join(repo, 'corral.yaml'), 'prices:\n  my-model-1:\n    input: 2\n    output: 10\n');
    const prices = priceTable(settingsFrom(await loadConfig(repo, env(), repo)));
    const usage = { inputTokens: 1_000_000, outputTokens: 1_000_000, cacheWriteTokens: 1_000_000, cacheReadTokens: 1_000_000 };
    expect(costUsd('my-model-1', usage, prices)).toBeCloseTo(2 + 10 + 2.5 + 0.2);
    expect(costUsd('my-model-1', usage)).toBeNull();
  });
});

describe('config problems', () => {
  it('names file, line, column and field, with a did-you-mean, for every problem', async () => {
    await writeFile(path.join(repo, 'corral.yaml'), 'modle: x\nbudget:\n  stepz: 3\nmodels:\n  fast: strong\npolicy:\n  deny: ["Bash(git push"]\n  rules:\n    - id: r\n      when: "tool =="\n      effect: deny\n');
    const { problems } = await loadConfig(repo, env(), repo);
    expect(problems).toEqual([
      expect.objectContaining({ file: 'corral.yaml', line: 1, column: 1, field: 'modle', message: 'unknown field', hint: 'did you mean `model`?' }),
      expect.objectContaining({ line: 3, column: 3, field: 'budget.stepz', hint: 'did you mean `steps`?' }),
      expect.objectContaining({ line: 5, field: 'models.fast', message: expect.stringContaining('not another alias') }),
      expect.objectContaining({ line: 7, field: 'policy.deny.0' }),
      expect.objectContaining({ line: 10, field: 'policy.rules.0.when', message: expect.stringContaining('not a valid CEL condition') }),
    ]);
  });

  it('resolves a replay model relative to the config file and reports a missing one', async () => {
    await writeFile(path.join(repo, 'corral.yaml'), 'models:\n  demo: replay:missing.yaml\n');
    const { problems } = await loadConfig(repo, env(), repo);
    expect(problems).toEqual([expect.objectContaining({ line: 2, field: 'models.demo', hint: 'the path is relative to the config file' })]);
  });
});
