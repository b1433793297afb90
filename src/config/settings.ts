import { createHash } from 'node:crypto';
import { DEFAULT_MODEL } from '../ticket/model-id.js';
import { effectiveConfig } from './describe.js';
import type { ModelPrice, PriceTable } from './prices.js';
import type { Problem } from '../errors.js';
import { HOOK_EVENTS, type HooksConfig } from '../policy/hooks-schema.js';
import { runStartRules, type PolicyLayer } from '../policy/stack.js';
import type { ExpressionRule } from '../policy/types.js';
import { DEFAULT_BUDGET, type SandboxMode, type Ticket, type TicketBudget } from '../ticket/types.js';
import { envChanges, sandboxParts } from '../ticket/schema.js';
import type { ConfigFileSlot, ConfigLayer, LoadedConfig } from './load.js';
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
  /** Folders every ticket's sandbox shows read-only (user and project lists add up). */
  sandboxRead: Sourced<string>[];
  /** Secret-named worktree files every ticket exposes. */
  sandboxExpose: Sourced<string>[];
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
}

const DEFAULT = 'default';

function fromLayer(layer: ConfigLayer, fieldPath: (string | number)[]): string {
  return `${layer.scope} ${layer.at(fieldPath)}`;
}

/** Stacks the layers: for a single value the later scope (project) wins; lists and tables add up. */
export function settingsFrom(loaded: Pick<LoadedConfig, 'layers' | 'files'>): Settings {
  const settings: Settings = {
    files: loaded.files,
    model: { value: DEFAULT_MODEL, from: DEFAULT },
    aliases: Object.create(null) as Record<string, Sourced<string>>,
    budget: {},
    prices: {},
    sandbox: { value: 'auto', from: DEFAULT },
    sandboxRead: [],
    sandboxExpose: [],
    maxRefusalsInARow: { value: DEFAULT_MAX_REFUSALS_IN_A_ROW, from: DEFAULT },
    env: Object.create(null) as Record<string, Sourced<string | null | true>>,
    modelApi: {},
    modelApiFrom: {},
    hooks: {},
    hookEntries: [],
    policyLayers: [],
    runStart: [],
  };
  for (const layer of loaded.layers) {
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
    const sandbox = sandboxParts(data.sandbox);
    const modeAt = typeof data.sandbox === 'string' ? ['sandbox'] : ['sandbox', 'mode'];
    if (sandbox.mode !== undefined) settings.sandbox = { value: sandbox.mode, from: fromLayer(layer, modeAt) };
    sandbox.read.forEach((value, index) => settings.sandboxRead.push({ value, from: fromLayer(layer, ['sandbox', 'read', index]) }));
    sandbox.expose.forEach((value, index) => settings.sandboxExpose.push({ value, from: fromLayer(layer, ['sandbox', 'expose', index]) }));
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

export function priceTable(settings: Settings): PriceTable {
  return Object.fromEntries(Object.entries(settings.prices).map(([model, price]) => [model, price.value]));
}

/**
 * The ticket as it runs under these settings: its model (an override, its own, or the
 * config's, with an alias resolved), budget fields it did not set taken from config,
 * and the config's sandbox when it named none. Problems name the ticket's file.
 */
export function applySettings(ticket: Ticket, settings: Settings, options: { modelOverride?: string; shownFile: string }): { ticket: Ticket; problems: Problem[] } {
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
      budget: { ...DEFAULT_BUDGET, ...configBudget, ...ticket.given.budget },
      sandbox: ticket.given.sandbox ?? settings.sandbox.value,
      sandboxChosen: ticket.given.sandbox !== undefined || settings.sandbox.from !== DEFAULT,
      sandboxRead: unique([...settings.sandboxRead.map((entry) => entry.value), ...ticket.sandboxRead]),
      sandboxExpose: unique([...settings.sandboxExpose.map((entry) => entry.value), ...ticket.sandboxExpose]),
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
