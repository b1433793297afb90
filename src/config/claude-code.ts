import path from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { Problem } from '../errors.js';
import { anchored, HOOK_EVENTS, matchesEveryTool, type HookEvent, type HooksConfig } from '../policy/hooks-schema.js';
import { parsePattern } from '../policy/pattern-syntax.js';
import type { PolicyFile } from '../policy/schema.js';
import { createLocator } from '../ticket/positions.js';
import { guardHookAgent } from './guard-hook-command.js';
import { readSettingsFile } from './read-settings-file.js';

// Claude Code's settings files, read as scopes beside corral's own: the user's
// `~/.claude/settings.json`, the project's `.claude/settings.json` and the personal
// `.claude/settings.local.json`. What corral has an equivalent for is applied with
// Claude Code's meaning; the rest of a valid file is listed as ignored, never refused.

export type ClaudeCodeScope = 'user' | 'project' | 'local';

/** One Claude Code settings file that exists and is valid, in corral's terms. */
export interface ClaudeCodeLayer {
  scope: ClaudeCodeScope;
  /** Absolute path. */
  file: string;
  /** The path as a person reads it (`.claude/settings.json`, `~/.claude/settings.json`). */
  shown: string;
  /** The folder a rule's `/x` is relative to: null for the project root (the worktree in a run). */
  root: string | null;
  /** `permissions.allow/ask/deny`, as a corral policy block. */
  policy: PolicyFile;
  /** `permissions.additionalDirectories`, absolute. */
  additionalDirectories: { value: string; index: number }[];
  /** The hooks of the events corral has, command hooks only. */
  hooks: HooksConfig;
  /** Where each kept hook group came from, by event and the group's index in `hooks`. */
  hookGroupIndex: Partial<Record<HookEvent, { group: number; hooks: number[] }[]>>;
  env: Record<string, string>;
  /** Settings corral has no equivalent for, by dotted name. */
  ignored: string[];
  /** `file:line` of the value at a path in the file. */
  at(fieldPath: (string | number)[]): string;
}

/** Where Claude Code's settings files of a scope are: user, then project, then local (the order they stack in: later wins). */
export function claudeCodeSettingsFiles(repo: string | null, env: NodeJS.ProcessEnv): { scope: ClaudeCodeScope; file: string }[] {
  const files: { scope: ClaudeCodeScope; file: string }[] = [];
  // CLAUDE_CONFIG_DIR moves Claude Code's user folder, as it does for Claude Code itself.
  const configDir = env.CLAUDE_CONFIG_DIR && path.isAbsolute(env.CLAUDE_CONFIG_DIR) ? env.CLAUDE_CONFIG_DIR : env.HOME ? path.join(env.HOME, '.claude') : null;
  if (configDir !== null) files.push({ scope: 'user', file: path.join(configDir, 'settings.json') });
  if (repo !== null) {
    files.push({ scope: 'project', file: path.join(repo, '.claude', 'settings.json') });
    files.push({ scope: 'local', file: path.join(repo, '.claude', 'settings.local.json') });
  }
  return files;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** One settings file: absent is fine; present must be JSON whose known fields have the right shape and whose rules name real tools. */
export async function loadClaudeCodeLayer(file: string, scope: ClaudeCodeScope, shown: string, home: string | undefined): Promise<{ found: boolean; layer?: ClaudeCodeLayer; problems: Problem[] }> {
  const read = await readSettingsFile(file);
  if ('absent' in read) return { found: false, problems: [] };
  if ('unreadable' in read) return { found: true, problems: [{ file: shown, line: 1, column: 1, field: '', message: `cannot read Claude Code's ${scope} settings: ${read.unreadable}` }] };
  const { text } = read;
  // JSON.parse decides what the file means (as it does for Claude Code); the YAML parser,
  // which reads JSON too, only tells where each value is written.
  const lineCounter = new LineCounter();
  const locator = createLocator(parseDocument(text, { lineCounter, prettyErrors: false }), lineCounter, 0);
  let data: unknown;
  try {
    data = text.trim() === '' ? {} : JSON.parse(text);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const offset = jsonErrorOffset(message, text);
    const where = offset === null ? { line: 1, column: 1 } : locator.atOffset(offset);
    return { found: true, problems: [{ file: shown, ...where, field: '', message: `not valid JSON: ${message}` }] };
  }
  const problems: Problem[] = [];
  const problem = (fieldPath: (string | number)[], message: string, hint?: string): void => {
    problems.push({ file: shown, ...locator.locate(fieldPath, 'value'), field: fieldPath.join('.'), message, ...(hint ? { hint } : {}) });
  };
  if (!isObject(data)) {
    problem([], 'Claude Code settings are a JSON object');
    return { found: true, problems };
  }
  const layer: ClaudeCodeLayer = {
    scope,
    file,
    shown,
    // The settings file's own folder for the user's (~/.claude), the project root for the others, as in Claude Code.
    root: scope === 'user' ? path.dirname(file) : null,
    policy: {},
    additionalDirectories: [],
    hooks: {},
    hookGroupIndex: {},
    env: {},
    ignored: [],
    at: (fieldPath) => `${shown}:${locator.locate(fieldPath, 'value').line}`,
  };
  for (const [key, value] of Object.entries(data)) {
    if (key === 'permissions') readPermissions(value, layer, problem, path.dirname(path.dirname(file)), home);
    else if (key === 'hooks') readHooks(value, layer, problem);
    else if (key === 'env') readEnv(value, layer, problem);
    else if (key !== '$schema') layer.ignored.push(key);
  }
  return problems.length > 0 ? { found: true, problems } : { found: true, layer, problems: [] };
}

/**
 * Where JSON.parse stopped, from its message: `at position N`, or (Node 20.19 and later)
 * the token and the text around it: `Unexpected token ']', ..."(ls)",]\n}" is not valid JSON`.
 */
function jsonErrorOffset(message: string, text: string): number | null {
  const position = /position (\d+)/.exec(message);
  if (position) return Number(position[1]);
  const around = /^Unexpected token '(.)', (?:\.\.\.)?"([\s\S]*?)"(?:\.\.\.)? is not valid JSON$/.exec(message);
  if (!around) return null;
  const start = text.indexOf(around[2]!);
  if (start === -1) return null;
  const token = around[2]!.indexOf(around[1]!);
  return start + Math.max(token, 0);
}

type Report = (fieldPath: (string | number)[], message: string, hint?: string) => void;

function readPermissions(value: unknown, layer: ClaudeCodeLayer, problem: Report, base: string, home: string | undefined): void {
  if (!isObject(value)) return problem(['permissions'], 'permissions is an object with allow, ask and deny lists');
  for (const [key, field] of Object.entries(value)) {
    if (key === 'allow' || key === 'ask' || key === 'deny') {
      if (!Array.isArray(field)) {
        problem(['permissions', key], `permissions.${key} is a list of rules, e.g. ["Bash(npm run test:*)"]`);
        continue;
      }
      const rules: string[] = [];
      field.forEach((rule, index) => {
        if (typeof rule !== 'string') return problem(['permissions', key, index], 'a rule is a string such as `Bash(npm run test:*)` or `Edit(/src/**)`');
        const parsed = parsePattern(rule);
        if (typeof parsed === 'string') return problem(['permissions', key, index], parsed);
        rules.push(rule);
      });
      // Kept at their indexes so each rule's line is found; a rule with a problem stops the load anyway.
      if (rules.length === field.length) layer.policy[key] = rules;
    } else if (key === 'additionalDirectories') {
      if (!Array.isArray(field) || field.some((dir) => typeof dir !== 'string')) {
        problem(['permissions', key], 'permissions.additionalDirectories is a list of folder paths');
        continue;
      }
      (field as string[]).forEach((dir, index) => layer.additionalDirectories.push({ value: absoluteDir(dir, base, home), index }));
    } else {
      layer.ignored.push(`permissions.${key}`);
    }
  }
}

/** A folder as Claude Code reads it: `~/x` under home, absolute as is, relative to where Claude Code runs (the project root). */
function absoluteDir(dir: string, base: string, home: string | undefined): string {
  if ((dir === '~' || dir.startsWith('~/')) && home) return path.join(home, dir.slice(1));
  return path.resolve(base, dir);
}

function readHooks(value: unknown, layer: ClaudeCodeLayer, problem: Report): void {
  if (!isObject(value)) return problem(['hooks'], 'hooks is an object of events, e.g. {"PreToolUse": [...]}');
  for (const [event, groups] of Object.entries(value)) {
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      layer.ignored.push(`hooks.${event}`);
      continue;
    }
    const known = event as HookEvent;
    if (!Array.isArray(groups)) {
      problem(['hooks', event], `hooks.${event} is a list of {matcher, hooks} groups`);
      continue;
    }
    groups.forEach((group, groupIndex) => {
      const at = ['hooks', event, groupIndex];
      if (!isObject(group) || !Array.isArray(group.hooks)) return problem(at, 'a hook group is {"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}');
      const matcher = group.matcher;
      if (matcher !== undefined && typeof matcher !== 'string') return problem([...at, 'matcher'], 'matcher is a string, a regular expression over tool names');
      if (typeof matcher === 'string' && !matchesEveryTool(matcher)) {
        try {
          new RegExp(matcher);
          anchored(matcher);
        } catch (error) {
          return problem([...at, 'matcher'], `matcher is not a valid regular expression: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
      const commands: { type: 'command'; command: string; timeout?: number }[] = [];
      const kept: number[] = [];
      (group.hooks as unknown[]).forEach((hook, hookIndex) => {
        const hookAt = [...at, 'hooks', hookIndex];
        if (!isObject(hook)) return problem(hookAt, 'a hook is {"type": "command", "command": "..."}');
        if (hook.type !== 'command') {
          layer.ignored.push(`hooks.${event}.${groupIndex}.hooks.${hookIndex} (type ${JSON.stringify(hook.type)}; corral runs command hooks)`);
          return;
        }
        if (typeof hook.command !== 'string' || !/\S/.test(hook.command)) return problem([...hookAt, 'command'], 'command is a non-empty string');
        if (hook.timeout !== undefined && (typeof hook.timeout !== 'number' || !(hook.timeout > 0))) return problem([...hookAt, 'timeout'], 'timeout is a positive number of seconds');
        // corral's own guard (`corral guard install`): a run's guard judges every call already.
        if (event === 'PreToolUse' && guardHookAgent(hook.command) !== undefined) {
          layer.ignored.push(`hooks.${event}.${groupIndex}.hooks.${hookIndex} (corral's own guard, which judges every call of a run already)`);
          return;
        }
        commands.push({ type: 'command', command: hook.command, ...(typeof hook.timeout === 'number' ? { timeout: Math.min(hook.timeout, 600) } : {}) });
        kept.push(hookIndex);
      });
      if (commands.length === 0) return;
      (layer.hooks[known] ??= []).push({ ...(typeof matcher === 'string' ? { matcher } : {}), hooks: commands });
      (layer.hookGroupIndex[known] ??= []).push({ group: groupIndex, hooks: kept });
    });
  }
}

const CORRAL_OWNED_ENV = /^(?:HOME|TMPDIR|GIT_DIR|GIT_WORK_TREE|GIT_INDEX_FILE|GIT_COMMON_DIR|GIT_CONFIG_(?:COUNT|KEY_\d+|VALUE_\d+|GLOBAL|SYSTEM|NOSYSTEM|PARAMETERS))$/;

function readEnv(value: unknown, layer: ClaudeCodeLayer, problem: Report): void {
  if (!isObject(value)) return problem(['env'], 'env is an object of variable names and their values');
  for (const [name, text] of Object.entries(value)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      problem(['env', name], `\`${name}\` is not an environment variable name`);
      continue;
    }
    // corral decides these for every tool: the private home and temp dir, and git's own view.
    if (CORRAL_OWNED_ENV.test(name)) {
      layer.ignored.push(`env.${name} (corral sets it)`);
      continue;
    }
    // Claude Code's schema says string; a number or boolean is what its author meant as text.
    if (typeof text === 'string' || typeof text === 'number' || typeof text === 'boolean') layer.env[name] = String(text);
    else problem(['env', name], 'an environment value is a string');
  }
}
