import { createHash } from 'node:crypto';
import path from 'node:path';
import { DEFAULT_MODEL } from '../ticket/model-id.js';
import { SECRET_NAME } from '../text/redact.js';
import { effectiveConfig } from './describe.js';
import type { ModelPrice, PriceTable } from './prices.js';
import type { Problem } from '../errors.js';
import { HOOK_EVENTS, type HooksConfig } from '../policy/hooks-schema.js';
import { runStartRules, type PolicyLayer } from '../policy/stack.js';
import type { ExpressionRule } from '../policy/types.js';
import { DEFAULT_BUDGET, type AgentKind, type EnvChanges, type SandboxMode, type Ticket, type TicketBudget } from '../ticket/types.js';
import { envChanges, sandboxParts } from '../ticket/schema.js';
import type { ClaudeCodeLayer } from './claude-code.js';
import type { ClaudeCodeSettings, ConfigFileSlot, ConfigLayer, LoadedConfig } from './load.js';
import { DEFAULT_MAX_REFUSALS_IN_A_ROW, LOOKS_LIKE_ALIAS } from './schema.js';

/** A value and where it came from: `default`, or `project corral.yaml:4`. */
export interface Sourced<T> {
  value: T;
  from: string;
}

/** One hook command with the matcher that selects it, as `corral config` lists them. */
export interface HookEntry {
  event: (typeof HOOK_EVENTS)[number];
  matcher: string;
  command: string;
  timeout: number;
  from: string;
}

/** The user and project config stacked: what every run of a repository starts from. */
export interface Settings {
  files: ConfigFileSlot[];
  /** The model of tickets that name none (an alias is resolved when a ticket is applied). */
  model: Sourced<string>;
  aliases: Record<string, Sourced<string>>;
  budget: { [K in keyof TicketBudget]?: Sourced<number> };
  prices: Record<string, Sourced<ModelPrice>>;
  sandbox: Sourced<SandboxMode>;
  /** The agent of tickets that name none. */
  agent: Sourced<AgentKind>;
  /** The agent CLIs config names (`agents.<kind>.command`), as written and made absolute when a path. */
  agentCommands: Partial<Record<Exclude<AgentKind, 'corral'>, Sourced<string>>>;
  /** Folders every ticket's sandbox shows read-only (user and project lists add up). */
  sandboxRead: Sourced<string>[];
  /** Secret-named worktree files every ticket exposes. */
  sandboxExpose: Sourced<string>[];
  /** A bubblewrap for each command instead of one per run (`sandbox.per_command`). */
  sandboxPerCommand: Sourced<boolean>;
  maxRefusalsInARow: Sourced<number>;
  /** The commands' environment as config changes it, by name (the project's entry beats the user's). */
  env: Record<string, Sourced<string | null | true>>;
  /** The SDK's per-request timeout and retries, when config sets them. */
  modelApi: { timeoutMs?: number; maxRetries?: number };
  /** Where each model_api value came from, for `corral config`. */
  modelApiFrom: { timeout_seconds?: Sourced<number>; max_retries?: Sourced<number> };
  /** User hooks run before project hooks for the same event. */
  hooks: HooksConfig;
  hookEntries: HookEntry[];
  /** The user and project `policy:` blocks; the ticket's is stacked on them by the guard. */
  policyLayers: PolicyLayer[];
  runStart: ExpressionRule[];
  /** Whether Claude Code's settings files are read, which were found, and what in them corral ignores. */
  claudeCode: { enabled: Sourced<boolean>; files: ClaudeCodeSettings['files']; ignored: Sourced<string>[] };
  /** Claude Code's `env`: later scopes win per name (local over project over user); corral's own `env` beats it. */
  claudeCodeEnv: Record<string, Sourced<string>>;
  /** Claude Code's `permissions.additionalDirectories`: folders commands may read. */
  additionalDirectories: Sourced<string>[];
}

const DEFAULT = 'default';

function fromLayer(layer: ConfigLayer, fieldPath: (string | number)[]): string {
  return `${layer.scope} ${layer.at(fieldPath)}`;
}

/** Stacks the layers: for a single value the later scope (project) wins; lists and tables add up. */
export function settingsFrom(loaded: Pick<LoadedConfig, 'layers' | 'files' | 'claudeCode'>): Settings {
  const settings: Settings = {
    files: loaded.files,
    model: { value: DEFAULT_MODEL, from: DEFAULT },
    aliases: Object.create(null) as Record<string, Sourced<string>>,
    budget: {},
    prices: {},
    sandbox: { value: 'auto', from: DEFAULT },
    agent: { value: 'corral', from: DEFAULT },
    agentCommands: {},
    sandboxRead: [],
    sandboxExpose: [],
    sandboxPerCommand: { value: false, from: DEFAULT },
    maxRefusalsInARow: { value: DEFAULT_MAX_REFUSALS_IN_A_ROW, from: DEFAULT },
    env: Object.create(null) as Record<string, Sourced<string | null | true>>,
    modelApi: {},
    modelApiFrom: {},
    hooks: {},
    hookEntries: [],
    policyLayers: [],
    runStart: [],
    claudeCode: { enabled: loaded.claudeCode?.enabled ?? { value: true, from: DEFAULT }, files: loaded.claudeCode?.files ?? [], ignored: [] },
    claudeCodeEnv: Object.create(null) as Record<string, Sourced<string>>,
    additionalDirectories: [],
  };
  // corral's files and Claude Code's in the order they stack: every user file, then the project's, then the local one.
  const claudeLayers = loaded.claudeCode?.layers ?? [];
  const stacked: ({ kind: 'corral'; layer: ConfigLayer } | { kind: 'claude'; layer: ClaudeCodeLayer })[] = [
    ...loaded.layers.filter((layer) => layer.scope === 'user').map((layer) => ({ kind: 'corral' as const, layer })),
    ...claudeLayers.filter((layer) => layer.scope === 'user').map((layer) => ({ kind: 'claude' as const, layer })),
    ...loaded.layers.filter((layer) => layer.scope !== 'user').map((layer) => ({ kind: 'corral' as const, layer })),
    ...claudeLayers.filter((layer) => layer.scope !== 'user').map((layer) => ({ kind: 'claude' as const, layer })),
  ];
  for (const entry of stacked) {
    if (entry.kind === 'claude') {
      addClaudeCodeLayer(settings, entry.layer);
      continue;
    }
    const layer = entry.layer;
    const { data } = layer;
    if (data.model !== undefined) settings.model = { value: data.model, from: fromLayer(layer, ['model']) };
    for (const [alias, model] of Object.entries(data.models ?? {})) settings.aliases[alias] = { value: model, from: fromLayer(layer, ['models', alias]) };
    for (const [field, value] of Object.entries(data.budget ?? {}) as [keyof TicketBudget, number][]) {
      settings.budget[field] = { value, from: fromLayer(layer, ['budget', field]) };
    }
    for (const [model, price] of Object.entries(data.prices ?? {})) {
      settings.prices[model] = {
        value: {
          inputPerMTok: price.input,
          outputPerMTok: price.output,
          // The API's usual ratios: a cache write costs 1.25 times input, a read a tenth.
          cacheWritePerMTok: price.cache_write ?? price.input * 1.25,
          cacheReadPerMTok: price.cache_read ?? price.input * 0.1,
        },
        from: fromLayer(layer, ['prices', model]),
      };
    }
    if (data.agent !== undefined) settings.agent = { value: data.agent, from: fromLayer(layer, ['agent']) };
    for (const [kind, cli] of Object.entries(data.agents ?? {}) as [Exclude<AgentKind, 'corral'>, { command: string } | undefined][]) {
      if (cli === undefined) continue;
      // A path is relative to the file that names it; a bare name is looked up on PATH.
      const command = cli.command.includes('/') ? path.resolve(path.dirname(layer.file), cli.command) : cli.command;
      settings.agentCommands[kind] = { value: command, from: fromLayer(layer, ['agents', kind, 'command']) };
    }
    const sandbox = sandboxParts(data.sandbox);
    const modeAt = typeof data.sandbox === 'string' ? ['sandbox'] : ['sandbox', 'mode'];
    if (sandbox.mode !== undefined) settings.sandbox = { value: sandbox.mode, from: fromLayer(layer, modeAt) };
    sandbox.read.forEach((value, index) => settings.sandboxRead.push({ value, from: fromLayer(layer, ['sandbox', 'read', index]) }));
    sandbox.expose.forEach((value, index) => settings.sandboxExpose.push({ value, from: fromLayer(layer, ['sandbox', 'expose', index]) }));
    if (sandbox.perCommand !== undefined) settings.sandboxPerCommand = { value: sandbox.perCommand, from: fromLayer(layer, ['sandbox', 'per_command']) };
    if (data.model_api?.timeout_seconds !== undefined) {
      settings.modelApi.timeoutMs = Math.ceil(data.model_api.timeout_seconds * 1000);
      settings.modelApiFrom.timeout_seconds = { value: data.model_api.timeout_seconds, from: fromLayer(layer, ['model_api', 'timeout_seconds']) };
    }
    if (data.model_api?.max_retries !== undefined) {
      settings.modelApi.maxRetries = data.model_api.max_retries;
      settings.modelApiFrom.max_retries = { value: data.model_api.max_retries, from: fromLayer(layer, ['model_api', 'max_retries']) };
    }
    const listed = Array.isArray(data.env);
    Object.entries(envChanges(data.env)).forEach(([name, value], index) => {
      settings.env[name] = { value, from: fromLayer(layer, ['env', listed ? index : name]) };
    });
    if (data.max_refusals_in_a_row !== undefined) settings.maxRefusalsInARow = { value: data.max_refusals_in_a_row, from: fromLayer(layer, ['max_refusals_in_a_row']) };
    for (const event of HOOK_EVENTS) {
      for (const [groupIndex, group] of (data.hooks?.[event] ?? []).entries()) {
        (settings.hooks[event] ??= []).push(group);
        for (const [hookIndex, hook] of group.hooks.entries()) {
          settings.hookEntries.push({ event, matcher: group.matcher ?? '*', command: hook.command, timeout: hook.timeout ?? 60, from: fromLayer(layer, ['hooks', event, groupIndex, 'hooks', hookIndex]) });
        }
      }
    }
    if (data.policy !== undefined) {
      settings.policyLayers.push({ scope: layer.scope, file: data.policy, source: layer.shown, locate: (fieldPath) => layer.at(['policy', ...fieldPath]) });
    }
  }
  settings.runStart = runStartRules(settings.policyLayers);
  return settings;
}

/** A Claude Code settings file stacked on what comes before it: its rules in corral's user or project scope (local is the project's), with Claude Code's meaning. */
function addClaudeCodeLayer(settings: Settings, layer: ClaudeCodeLayer): void {
  const scope = layer.scope === 'user' ? 'user' : 'project';
  const from = (fieldPath: (string | number)[]): string => `${scope} ${layer.at(fieldPath)}`;
  settings.policyLayers.push({
    scope,
    file: layer.policy,
    source: layer.shown,
    locate: (fieldPath) => layer.at(['permissions', ...fieldPath]),
    dialect: { kind: 'claude-code', root: layer.root },
  });
  for (const event of HOOK_EVENTS) {
    const groups = layer.hooks[event] ?? [];
    groups.forEach((group, index) => {
      (settings.hooks[event] ??= []).push(group);
      const place = layer.hookGroupIndex[event]![index]!;
      group.hooks.forEach((hook, hookIndex) => {
        const at = ['hooks', event, place.group, 'hooks', place.hooks[hookIndex]!];
        settings.hookEntries.push({ event, matcher: group.matcher ?? '*', command: hook.command, timeout: hook.timeout ?? 60, from: from(at) });
      });
    });
  }
  for (const [name, value] of Object.entries(layer.env)) settings.claudeCodeEnv[name] = { value, from: from(['env', name]) };
  for (const dir of layer.additionalDirectories) settings.additionalDirectories.push({ value: dir.value, from: from(['permissions', 'additionalDirectories', dir.index]) });
  // As in Claude Code, a working directory added there may be read without asking (its
  // secrets stay denied by the baseline; writes stay in the worktree).
  // A folder whose name holds glob characters would be read as a pattern: it gets no rule.
  const plain = layer.additionalDirectories.filter((dir) => !/[*?[\]{}()!\\]/.test(dir.value));
  if (plain.length > 0) {
    const reads = plain.map((dir) => `Read(/${dir.value.replace(/\/+$/, '')}/**)`);
    settings.policyLayers.push({
      scope,
      file: { allow: reads },
      source: layer.shown,
      locate: (fieldPath) => layer.at(['permissions', 'additionalDirectories', plain[Number(fieldPath[1])]!.index]),
      dialect: { kind: 'claude-code', root: layer.root },
    });
  }
  for (const name of layer.ignored) settings.claudeCode.ignored.push({ value: name, from: layer.shown });
}

/** What a Claude Code settings file holds that corral does not apply, said once: nothing in it is silently dropped. */
export function claudeCodeNotice(settings: Settings): string | null {
  if (settings.claudeCode.ignored.length === 0) return null;
  const byFile = new Map<string, string[]>();
  for (const entry of settings.claudeCode.ignored) byFile.set(entry.from, [...(byFile.get(entry.from) ?? []), entry.value]);
  const parts = [...byFile].map(([file, names]) => `${file}: ${names.join(', ')}`);
  return `Claude Code settings corral has no equivalent for are ignored: ${parts.join('; ')}`;
}

/**
 * The values Claude Code's `env` gives tools. A variable whose name says it holds a
 * secret reaches them only when the ticket passes it by name, as for the host's.
 */
export function settingsToolEnv(settings: Settings, passed: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, sourced] of Object.entries(settings.claudeCodeEnv)) {
    if (SECRET_NAME.test(name) && !passed.includes(name)) continue;
    env[name] = sourced.value;
  }
  return env;
}

/**
 * The commands' `env` changes under these settings: Claude Code's `env` below the
 * config's and the ticket's (already one mapping after applySettings). A name `env`
 * passes (`true`, or listed) that Claude Code's `env` sets takes that value, as the
 * host's would be passed.
 */
export function toolEnvChanges(settings: Settings, changes: EnvChanges): EnvChanges {
  const claude = settingsToolEnv(settings, Object.keys(changes));
  const merged: EnvChanges = { ...claude, ...changes };
  for (const [name, change] of Object.entries(changes)) if (change === true && Object.hasOwn(claude, name)) merged[name] = claude[name]!;
  return merged;
}

export function priceTable(settings: Settings): PriceTable {
  return Object.fromEntries(Object.entries(settings.prices).map(([model, price]) => [model, price.value]));
}

/**
 * The ticket as it runs under these settings: its model (an override, its own, or the
 * config's, with an alias resolved), budget fields it did not set taken from config,
 * and the config's sandbox when it named none. Problems name the ticket's file.
 */
export function applySettings(ticket: Ticket, settings: Settings, options: { modelOverride?: string; agentOverride?: AgentKind; shownFile: string }): { ticket: Ticket; problems: Problem[] } {
  const problems: Problem[] = [];
  const named = options.modelOverride ?? ticket.model ?? settings.model.value;
  const alias = Object.hasOwn(settings.aliases, named) ? settings.aliases[named] : undefined;
  let model = alias?.value ?? named;
  if (alias === undefined && LOOKS_LIKE_ALIAS.test(named)) {
    const known = Object.keys(settings.aliases);
    problems.push({
      file: options.shownFile,
      line: 1,
      column: 1,
      field: 'model',
      message: `\`${named}\` is not a model id, and no config defines it as an alias`,
      hint: known.length > 0 ? `aliases: ${known.join(', ')}` : 'define it under `models:` in corral.yaml, e.g. `models: {fast: claude-haiku-4-5}`',
    });
    model = named;
  }
  const configBudget = Object.fromEntries(Object.entries(settings.budget).map(([field, sourced]) => [field, sourced.value]));
  return {
    ticket: {
      ...ticket,
      model,
      // As `--model`: `--agent` overrides the ticket, whose own choice beats the config's.
      agent: options.agentOverride ?? ticket.given.agent ?? settings.agent.value,
      budget: { ...DEFAULT_BUDGET, ...configBudget, ...ticket.given.budget },
      sandbox: ticket.given.sandbox ?? settings.sandbox.value,
      sandboxChosen: ticket.given.sandbox !== undefined || settings.sandbox.from !== DEFAULT,
      sandboxRead: unique([...settings.sandboxRead.map((entry) => entry.value), ...ticket.sandboxRead]),
      sandboxExpose: unique([...settings.sandboxExpose.map((entry) => entry.value), ...ticket.sandboxExpose]),
      ...((ticket.given.sandboxPerCommand ?? settings.sandboxPerCommand.value) ? { sandboxPerCommand: true } : {}),
      env: { ...Object.fromEntries(Object.entries(settings.env).map(([name, sourced]) => [name, sourced.value])), ...ticket.env },
    },
    problems,
  };
}

/** Settings with no config file at all: what a library caller gets by default. */
export function defaultSettings(): Settings {
  return settingsFrom({ layers: [], files: [] });
}

/**
 * A short digest of everything config decides for this ticket (values, rules and their
 * sources, hooks), so two traces show at a glance whether they ran under the same config.
 */
export function configDigest(settings: Settings, ticket: Ticket): string {
  // Values and rules only, not the files they came from: the same config on another machine has the same digest.
  const config = effectiveConfig(settings, ticket);
  const decided = {
    values: Object.fromEntries(Object.entries(config.values).map(([name, sourced]) => [name, sourced.value])),
    rules: config.policy.rules.map((rule) => [rule.effect, rule.id, rule.scope, rule.hook]),
    defaultEffect: config.policy.defaultEffect.value,
    hooks: config.hooks.map((hook) => [hook.event, hook.matcher, hook.command, hook.timeout]),
  };
  return createHash('sha256').update(JSON.stringify(decided)).digest('hex').slice(0, 16);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
