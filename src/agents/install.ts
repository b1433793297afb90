import { accessSync, constants, realpathSync } from 'node:fs';
import path from 'node:path';
import { claudeCodeSettingsFiles } from '../config/claude-code.js';
import { guardHookAgent } from '../config/guard-hook-command.js';
import { UsageError } from '../errors.js';
import { findExecutable } from '../proc/find-executable.js';
import { appendTo, JsonSyntaxError, parseJsonText, removeFrom, replaceValue, styleOf, valueOf, type JsonMember, type JsonNode } from './install-json.js';

// `corral guard install|uninstall`: corral's guard as a PreToolUse command hook in the
// agent settings a person uses at their desk, so Claude Code and Codex sessions get the
// same decisions a run gets. Claude Code reads `.claude/settings.json` (project),
// `.claude/settings.local.json` (local) and `~/.claude/settings.json` (user); Codex reads
// `.codex/hooks.json` (project) and `~/.codex/hooks.json` (user), in the same
// `{"hooks": {"PreToolUse": [{matcher, hooks: [{type, command}]}]}}` shape. This module
// edits their text; the command module does the reading and writing.

export type GuardAgent = 'claude-code' | 'codex';
export type InstallScope = 'project' | 'user' | 'local';

export const GUARD_AGENTS: readonly GuardAgent[] = ['claude-code', 'codex'];
export const INSTALL_SCOPES: readonly InstallScope[] = ['project', 'user', 'local'];

/** One agent settings file the hook goes into. */
export interface SettingsTarget {
  agent: GuardAgent;
  scope: InstallScope;
  /** Absolute path. */
  file: string;
  /** As a person reads it: `.claude/settings.json`, `~/.codex/hooks.json`. */
  shown: string;
}

/** The settings file of `agent` at `scope`; project and local need the repository's root. */
export function settingsTarget(agent: GuardAgent, scope: InstallScope, where: { repo: string | null; env: NodeJS.ProcessEnv }): SettingsTarget {
  const { repo, env } = where;
  if (scope !== 'user' && repo === null) throw new UsageError(`guard install: --scope ${scope} writes the repository's own settings, and ${process.cwd()} is not in a git repository (use --scope user for your own)`);
  const home = env.HOME && path.isAbsolute(env.HOME) ? env.HOME : undefined;
  const shownFrom = (file: string): string => {
    if (repo !== null && scope !== 'user') return path.relative(repo, file);
    if (home !== undefined && file.startsWith(`${home}${path.sep}`)) return `~/${path.relative(home, file)}`;
    return file;
  };
  if (agent === 'claude-code') {
    const file = claudeCodeSettingsFiles(scope === 'user' ? null : repo, env).find((entry) => entry.scope === scope)?.file;
    if (file === undefined) throw new UsageError('guard install: --scope user needs HOME (or CLAUDE_CONFIG_DIR) to find ~/.claude/settings.json');
    return { agent, scope, file, shown: shownFrom(file) };
  }
  if (scope === 'local') throw new UsageError('guard install: Codex has no local settings file; use --scope project (.codex/hooks.json) or --scope user (~/.codex/hooks.json)');
  // CODEX_HOME moves Codex's user folder, as it does for Codex itself.
  const codexHome = env.CODEX_HOME && path.isAbsolute(env.CODEX_HOME) ? env.CODEX_HOME : home !== undefined ? path.join(home, '.codex') : undefined;
  if (scope === 'user' && codexHome === undefined) throw new UsageError('guard install: --scope user needs HOME (or CODEX_HOME) to find ~/.codex/hooks.json');
  const file = scope === 'user' ? path.join(codexHome!, 'hooks.json') : path.join(repo!, '.codex', 'hooks.json');
  return { agent, scope, file, shown: shownFrom(file) };
}

/** The hook command for `agent`: `<corral> guard hook --agent <agent>`. */
export function hookCommandFor(agent: GuardAgent, corral: string): string {
  return `${corral} guard hook --agent ${agent}`;
}

/** A path quoted for the shell the agent runs its hook command with, when it needs quoting. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * What runs corral in a hook: `corral` when that name is on PATH, else the running
 * corral's own script by its absolute path (with node when the script is not executable).
 */
export function corralInvocation(facts: { onPath: boolean; script: string | undefined; scriptExecutable: boolean; node: string }): string {
  if (facts.onPath || facts.script === undefined) return 'corral';
  return facts.scriptExecutable ? shellQuote(facts.script) : `${shellQuote(facts.node)} ${shellQuote(facts.script)}`;
}

/** How a hook runs the corral that runs now: by name when it is on PATH, else by its path. */
export function runningCorral(env: NodeJS.ProcessEnv): { invocation: string; onPath: boolean } {
  const onPath = findExecutable('corral', env.PATH ?? '') !== undefined;
  let script: string | undefined;
  let scriptExecutable = false;
  try {
    script = process.argv[1] === undefined ? undefined : realpathSync(process.argv[1]);
    if (script !== undefined) {
      accessSync(script, constants.X_OK);
      scriptExecutable = true;
    }
  } catch {
    // Not executable (or gone): node runs it by path.
  }
  return { invocation: corralInvocation({ onPath, script, scriptExecutable, node: process.execPath }), onPath };
}

/** A hook corral put there: the command given, or any `corral … guard hook --agent <agent>`. */
export function isCorralHook(hook: unknown, agent: GuardAgent, command?: string): boolean {
  if (typeof hook !== 'object' || hook === null || Array.isArray(hook)) return false;
  const { type, command: text } = hook as { type?: unknown; command?: unknown };
  if (type !== 'command' || typeof text !== 'string') return false;
  if (command !== undefined && text === command) return true;
  return guardHookAgent(text) === agent;
}

/** What an edit did to a settings file's text. */
export interface SettingsEdit {
  /** The new text; the same string when nothing changed. */
  text: string;
  change: 'added' | 'updated' | 'unchanged' | 'removed' | 'none';
  /** Hooks removed (uninstall), or the command replaced (install's `updated`). */
  removed: number;
  previous?: string;
}

/** The hook group corral adds: every tool (Claude Code's `*`; Codex matches every tool without a matcher). */
function hookGroup(agent: GuardAgent, command: string): Record<string, unknown> {
  const hooks = [{ type: 'command', command }];
  return agent === 'claude-code' ? { matcher: '*', hooks } : { hooks };
}

interface Located {
  text: string;
  root: JsonNode & { kind: 'object' };
  hooks?: { member: JsonMember; index: number; node: JsonNode & { kind: 'object' } };
  preToolUse?: { member: JsonMember; index: number; node: JsonNode & { kind: 'array' } };
}

/** Parses a settings file and finds its hooks.PreToolUse, refusing (exit 64, file and line) what is not JSON or not shaped as settings. */
function locate(text: string, shown: string): Located {
  let root: JsonNode;
  try {
    root = parseJsonText(text);
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw refusal(shown, { line: error.line, column: error.column }, '', `not valid JSON: ${error.message}`);
  }
  const at = (node: JsonNode): { line: number; column: number } => lineAndColumn(text, node.start);
  if (root.kind !== 'object') throw refusal(shown, at(root), '', 'agent settings are a JSON object');
  const found: Located = { text, root };
  // JSON.parse, as the agents read the file, keeps the last of a repeated key.
  const hooksIndex = lastIndex(root.members, 'hooks');
  if (hooksIndex === -1) return found;
  const hooks = root.members[hooksIndex]!;
  if (hooks.value.kind !== 'object') throw refusal(shown, at(hooks.value), 'hooks', 'hooks is an object of events, e.g. {"PreToolUse": [...]}');
  found.hooks = { member: hooks, index: hooksIndex, node: hooks.value };
  const preIndex = lastIndex(hooks.value.members, 'PreToolUse');
  if (preIndex === -1) return found;
  const pre = hooks.value.members[preIndex]!;
  if (pre.value.kind !== 'array') throw refusal(shown, at(pre.value), 'hooks.PreToolUse', 'hooks.PreToolUse is a list of {matcher, hooks} groups');
  found.preToolUse = { member: pre, index: preIndex, node: pre.value };
  return found;
}

/** Corral's hooks in hooks.PreToolUse: the group, the hook, and the hook's command node. */
function corralHooks(pre: JsonNode & { kind: 'array' }, agent: GuardAgent, command?: string): { group: number; hooksArray: JsonNode & { kind: 'array' }; hook: number; commandNode: JsonNode }[] {
  const found: { group: number; hooksArray: JsonNode & { kind: 'array' }; hook: number; commandNode: JsonNode }[] = [];
  pre.elements.forEach((group, groupIndex) => {
    if (group.kind !== 'object') return;
    const hooks = group.members[lastIndex(group.members, 'hooks')]?.value;
    if (hooks?.kind !== 'array') return;
    hooks.elements.forEach((hook, hookIndex) => {
      if (hook.kind !== 'object' || !isCorralHook(valueOf(hook), agent, command)) return;
      const commandNode = hook.members[lastIndex(hook.members, 'command')]!.value;
      found.push({ group: groupIndex, hooksArray: hooks, hook: hookIndex, commandNode });
    });
  });
  return found;
}

/**
 * Adds corral's hook to a settings file's text (null or blank: a new file). Once only: a
 * corral hook already there with this command leaves the text as it is, and one with
 * another command (corral moved) gets this one. Everything else keeps its bytes.
 */
export function installGuardHook(text: string | null, agent: GuardAgent, command: string, shown: string): SettingsEdit {
  const group = hookGroup(agent, command);
  if (text === null || text.trim() === '') return { text: `${JSON.stringify({ hooks: { PreToolUse: [group] } }, null, 2)}\n`, change: 'added', removed: 0 };
  const { body, bom } = withoutBom(text);
  const found = locate(body, shown);
  const style = styleOf(body);
  if (found.preToolUse !== undefined) {
    const ours = corralHooks(found.preToolUse.node, agent, command);
    if (ours.some((hook) => valueOf(hook.commandNode) === command)) return { text, change: 'unchanged', removed: 0 };
    if (ours.length > 0) {
      const first = ours[0]!;
      return { text: bom + replaceValue(body, first.commandNode, command), change: 'updated', removed: 0, previous: String(valueOf(first.commandNode)) };
    }
    return { text: bom + appendTo(body, found.preToolUse.node, 2, { value: group }, style), change: 'added', removed: 0 };
  }
  if (found.hooks !== undefined) return { text: bom + appendTo(body, found.hooks.node, 1, { key: 'PreToolUse', value: [group] }, style), change: 'added', removed: 0 };
  return { text: bom + appendTo(body, found.root, 0, { key: 'hooks', value: { PreToolUse: [group] } }, style), change: 'added', removed: 0 };
}

/**
 * Removes every corral hook of `agent` (and the hook `command` names, when given) from a
 * settings file's text. A group, the PreToolUse list or the hooks object left empty by
 * that removal goes too; everything else keeps its bytes.
 */
export function uninstallGuardHook(text: string | null, agent: GuardAgent, shown: string, command?: string): SettingsEdit {
  if (text === null || text.trim() === '') return { text: text ?? '', change: 'none', removed: 0 };
  const { body, bom } = withoutBom(text);
  let current = body;
  let removed = 0;
  for (;;) {
    const found = locate(current, shown);
    if (found.preToolUse === undefined || found.hooks === undefined) break;
    const first = corralHooks(found.preToolUse.node, agent, command)[0];
    if (first === undefined) break;
    const pre = found.preToolUse.node;
    if (first.hooksArray.elements.length > 1) current = removeFrom(current, first.hooksArray, first.hook);
    else if (pre.elements.length > 1) current = removeFrom(current, pre, first.group);
    else if (found.hooks.node.members.length > 1) current = removeFrom(current, found.hooks.node, found.preToolUse.index);
    else current = removeFrom(current, found.root, found.hooks.index);
    removed += 1;
  }
  return removed === 0 ? { text, change: 'none', removed: 0 } : { text: bom + current, change: 'removed', removed };
}

function withoutBom(text: string): { body: string; bom: string } {
  return text.startsWith('\uFEFF') ? { body: text.slice(1), bom: '\uFEFF' } : { body: text, bom: '' };
}

function lastIndex(members: JsonMember[], key: string): number {
  for (let i = members.length - 1; i >= 0; i -= 1) if (members[i]!.key === key) return i;
  return -1;
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  return { line: before.split('\n').length, column: offset - (before.lastIndexOf('\n') + 1) + 1 };
}

function refusal(shown: string, where: { line: number; column: number }, field: string, message: string): UsageError {
  return new UsageError(`${shown}:${where.line}:${where.column}:${field ? ` ${field}:` : ''} ${message}; nothing was changed (fix the file, then run the command again)`);
}

/** Whether a Codex config.toml turns hooks off: `[features] hooks = false` (or the older `codex_hooks`). */
export function codexHooksTurnedOff(configToml: string): boolean {
  let table = '';
  for (const raw of configToml.split(/\r?\n/)) {
    const line = raw.replace(/#.*$/, '').trim();
    const header = /^\[\s*([^\]]+?)\s*\]$/.exec(line);
    if (header) {
      table = header[1]!;
      continue;
    }
    const setting = /^([A-Za-z0-9_.]+)\s*=\s*false$/.exec(line)?.[1];
    if (setting === undefined) continue;
    const name = table === '' ? setting : `${table}.${setting}`;
    if (name === 'features.hooks' || name === 'features.codex_hooks') return true;
  }
  return false;
}
