import { runStartRules, stackPolicies } from '../policy/stack.js';
import { SECRET_NAME } from '../text/redact.js';
import { DEFAULT_BUDGET, type Ticket } from '../ticket/types.js';
import type { Settings, Sourced } from './settings.js';

/** The effective config as plain data: every value with where it came from. */
export interface EffectiveConfig {
  files: { scope: string; file: string; found: boolean }[];
  values: Record<string, Sourced<string | number>>;
  policy: {
    rules: { id: string; effect: string; scope: string; hook: 'tool.call' | 'run.start'; from: string }[];
    defaultEffect: Sourced<string>;
  };
  hooks: { event: string; matcher: string; command: string; timeout: number; from: string }[];
  /** What Claude Code's settings files hold that corral does not apply. */
  ignored: Sourced<string>[];
}

/**
 * What a run in this repository starts from, and, given a ticket, what that ticket gets:
 * its own fields are named `ticket <file>`.
 */
export function effectiveConfig(settings: Settings, ticket?: Ticket, ticketShown?: string): EffectiveConfig {
  const values: Record<string, Sourced<string | number>> = {};
  const fromTicket = `ticket ${ticketShown ?? ticket?.file ?? ''}`;
  values.model = ticket?.model !== undefined ? { value: ticket.model, from: fromTicket } : settings.model;
  const alias = settings.aliases[String(values.model.value)];
  if (alias) values.model = { value: `${alias.value} (alias ${values.model.value}, ${values.model.from})`, from: alias.from };
  for (const [name, target] of Object.entries(settings.aliases)) values[`models.${name}`] = target;
  for (const field of ['steps', 'tokens', 'minutes', 'usd'] as const) {
    const given = ticket?.given.budget[field];
    const configured = settings.budget[field];
    const fallback = field === 'usd' ? undefined : { value: DEFAULT_BUDGET[field], from: 'default' };
    const value = given !== undefined ? { value: given, from: fromTicket } : (configured ?? fallback);
    if (value) values[`budget.${field}`] = value;
  }
  values.sandbox = ticket?.given.sandbox ? { value: ticket.given.sandbox, from: fromTicket } : settings.sandbox;
  // Shown only when a file or the ticket sets it: one bubblewrap per run is the default.
  const perCommand = ticket?.given.sandboxPerCommand;
  if (perCommand !== undefined) values['sandbox.per_command'] = { value: String(perCommand), from: fromTicket };
  else if (settings.sandboxPerCommand.from !== 'default') values['sandbox.per_command'] = { value: String(settings.sandboxPerCommand.value), from: settings.sandboxPerCommand.from };
  values.agent = ticket?.given.agent ? { value: ticket.given.agent, from: fromTicket } : settings.agent;
  for (const [kind, command] of Object.entries(settings.agentCommands)) if (command !== undefined) values[`agents.${kind}.command`] = command;
  settings.sandboxRead.forEach((entry, index) => (values[`sandbox.read.${index}`] = entry));
  settings.sandboxExpose.forEach((entry, index) => (values[`sandbox.expose.${index}`] = entry));
  const own = settings.sandboxRead.length;
  ticket?.sandboxRead.filter((value) => !settings.sandboxRead.some((entry) => entry.value === value)).forEach((value, index) => (values[`sandbox.read.${own + index}`] = { value, from: fromTicket }));
  const exposed = settings.sandboxExpose.length;
  ticket?.sandboxExpose.filter((value) => !settings.sandboxExpose.some((entry) => entry.value === value)).forEach((value, index) => (values[`sandbox.expose.${exposed + index}`] = { value, from: fromTicket }));
  const shownEnv = (value: string | null | true): string => (value === null ? 'unset' : value === true ? 'passed through' : value);
  for (const [name, sourced] of Object.entries(settings.env)) values[`env.${name}`] = { value: shownEnv(sourced.value), from: sourced.from };
  for (const [name, value] of Object.entries(ticket?.env ?? {})) {
    // A ticket after applySettings holds config's entries too; only its own are named after it.
    if (settings.env[name]?.value !== value) values[`env.${name}`] = { value: shownEnv(value), from: fromTicket };
  }
  values.max_refusals_in_a_row = settings.maxRefusalsInARow;
  values['claude_code.settings'] = { value: String(settings.claudeCode.enabled.value), from: settings.claudeCode.enabled.from };
  // A secret's value is never printed, only that it is set.
  // Claude Code's `env`, where corral's own `env` (which wins) does not name the variable.
  for (const [name, sourced] of Object.entries(settings.claudeCodeEnv)) {
    if (!Object.hasOwn(values, `env.${name}`)) values[`env.${name}`] = { value: SECRET_NAME.test(name) ? '(set; a secret, passed only when a ticket names it)' : sourced.value, from: sourced.from };
  }
  settings.additionalDirectories.forEach((entry, index) => (values[`additionalDirectories.${index}`] = entry));
  values['model_api.timeout_seconds'] = settings.modelApiFrom.timeout_seconds ?? { value: 600, from: 'default (the SDK\'s)' };
  values['model_api.max_retries'] = settings.modelApiFrom.max_retries ?? { value: 2, from: 'default (the SDK\'s)' };
  for (const [model, price] of Object.entries(settings.prices)) {
    const p = price.value;
    values[`prices.${model}`] = { value: `$${p.inputPerMTok} in, $${p.outputPerMTok} out, $${p.cacheWritePerMTok} cache write, $${p.cacheReadPerMTok} cache read per MTok`, from: price.from };
  }

  const layers = [...settings.policyLayers, ...(ticket?.policy ? [{ scope: 'ticket' as const, file: ticket.policy, source: ticketShown ?? ticket.file }] : [])];
  const policy = stackPolicies(layers);
  const runStart = [...settings.runStart, ...runStartRules(layers.filter((layer) => layer.scope === 'ticket'))];
  const defaultLayer = layers.find((layer) => layer.scope === policy.defaultScope && layer.file?.default_effect !== undefined);
  return {
    files: [
      ...settings.files.map((slot) => ({ scope: slot.scope, file: slot.file, found: slot.found })),
      ...settings.claudeCode.files.map((slot) => ({ scope: `claude ${slot.scope}`, file: slot.file, found: slot.found })),
    ],
    values,
    policy: {
      rules: [
        ...policy.rules.map((rule) => ({ id: rule.id, effect: rule.effect, scope: rule.scope, hook: 'tool.call' as const, from: rule.source ?? rule.scope })),
        ...runStart.map((rule) => ({ id: rule.id, effect: rule.effect, scope: rule.scope, hook: 'run.start' as const, from: rule.source ?? rule.scope })),
      ],
      defaultEffect: {
        value: policy.defaultEffect,
        from: defaultLayer ? `${defaultLayer.scope} ${defaultLayer.locate?.(['default_effect']) ?? defaultLayer.source ?? ''}` : 'default',
      },
    },
    hooks: settings.hookEntries.map((entry) => ({ ...entry })),
    ignored: settings.claudeCode.ignored.map((entry) => ({ ...entry })),
  };
}

/** `corral config` for a person: aligned `name  value  from` lines. */
export function formatEffectiveConfig(config: EffectiveConfig): string {
  const lines: string[] = ['files (user, then project, then Claude Code\'s local; later scopes win for single values, and a deny anywhere beats an allow anywhere)'];
  for (const file of config.files) lines.push(`  ${file.scope.padEnd(8)} ${file.file}${file.found ? '' : '  (not found)'}`);
  const width = Math.max(...Object.keys(config.values).map((name) => name.length), 14);
  lines.push('values');
  for (const [name, sourced] of Object.entries(config.values)) lines.push(`  ${name.padEnd(width)}  ${String(sourced.value)}  ← ${sourced.from}`);
  lines.push(`policy (baseline hard limits first; deny beats ask beats allow)`);
  for (const rule of config.policy.rules) {
    const hook = rule.hook === 'run.start' ? ' [run.start]' : '';
    lines.push(`  ${rule.effect.padEnd(5)} ${rule.id}${hook}  ← ${rule.scope} ${rule.from}`);
  }
  lines.push(`  default_effect ${config.policy.defaultEffect.value}  ← ${config.policy.defaultEffect.from}`);
  lines.push('hooks');
  if (config.hooks.length === 0) lines.push('  none');
  for (const hook of config.hooks) lines.push(`  ${hook.event} ${hook.event === 'Stop' ? '' : `[${hook.matcher}] `}${hook.command} (timeout ${hook.timeout}s)  ← ${hook.from}`);
  if (config.ignored.length > 0) {
    lines.push('ignored (Claude Code settings corral has no equivalent for)');
    for (const entry of config.ignored) lines.push(`  ${entry.value}  ← ${entry.from}`);
  }
  return `${lines.join('\n')}\n`;
}
