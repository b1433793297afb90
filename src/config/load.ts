import os from 'node:os';
import path from 'node:path';
import type { Problem } from '../errors.js';
import { prepareConditions } from '../policy/conditions.js';
import { describeIssues } from '../ticket/describe-issues.js';
import { parseTicketText } from '../ticket/parse-text.js';
import type { FieldProblem } from '../ticket/positions.js';
import { resolveModel } from '../ticket/references.js';
import { claudeCodeSettingsFiles, loadClaudeCodeLayer, type ClaudeCodeLayer, type ClaudeCodeScope } from './claude-code.js';
import { configFieldNamesAt, configFileSchema, type ConfigFile } from './schema.js';
import { readSettingsFile } from './read-settings-file.js';

export type ConfigScope = 'user' | 'project';

/** One config file that exists and is valid. */
export interface ConfigLayer {
  scope: ConfigScope;
  /** Absolute path. */
  file: string;
  /** The path as a person reads it: relative to the working directory, or under `~`. */
  shown: string;
  data: ConfigFile;
  /** `file:line` of the field at `fieldPath`, to say where a value or rule came from. */
  at(fieldPath: (string | number)[]): string;
}

/** Where a scope's config file is looked for, and whether it was there. */
export interface ConfigFileSlot {
  scope: ConfigScope;
  file: string;
  found: boolean;
}

/** Claude Code's settings files: whether corral reads them, and which it found. */
export interface ClaudeCodeSettings {
  /** False when `claude_code.settings: false` turns them off; `from` names where. */
  enabled: { value: boolean; from: string };
  files: { scope: ClaudeCodeScope; file: string; found: boolean }[];
  /** User, then project, then local: the order they stack in. */
  layers: ClaudeCodeLayer[];
}

export interface LoadedConfig {
  /** User first, then project: the order scopes stack in. */
  layers: ConfigLayer[];
  files: ConfigFileSlot[];
  claudeCode?: ClaudeCodeSettings;
  problems: Problem[];
}

export const PROJECT_CONFIG_NAME = 'corral.yaml';

/** `$XDG_CONFIG_HOME/corral/config.yaml`, by default `~/.config/corral/config.yaml`; null without a home. */
export function userConfigFile(env: NodeJS.ProcessEnv): string | null {
  const base = env.XDG_CONFIG_HOME && path.isAbsolute(env.XDG_CONFIG_HOME) ? env.XDG_CONFIG_HOME : env.HOME ? path.join(env.HOME, '.config') : null;
  return base === null ? null : path.join(base, 'corral', 'config.yaml');
}

export function projectConfigFile(repo: string): string {
  return path.join(repo, PROJECT_CONFIG_NAME);
}

/** The user's config and, when there is a repository, its project config: every problem of both, each placed at file:line:column. */
export async function loadConfig(repo: string | null, env: NodeJS.ProcessEnv, cwd: string): Promise<LoadedConfig> {
  const slots: { scope: ConfigScope; file: string }[] = [];
  const user = userConfigFile(env);
  if (user !== null) slots.push({ scope: 'user', file: user });
  if (repo !== null) slots.push({ scope: 'project', file: projectConfigFile(repo) });
  const loaded: LoadedConfig = { layers: [], files: [], problems: [] };
  for (const slot of slots) {
    const result = await loadConfigLayer(slot.file, slot.scope, showPath(slot.file, cwd, env.HOME));
    loaded.files.push({ ...slot, found: result.found });
    loaded.problems.push(...result.problems);
    if (result.layer) loaded.layers.push(result.layer);
  }
  loaded.claudeCode = { enabled: claudeCodeEnabled(loaded.layers), files: [], layers: [] };
  if (loaded.claudeCode.enabled.value) {
    for (const slot of claudeCodeSettingsFiles(repo, env)) {
      const result = await loadClaudeCodeLayer(slot.file, slot.scope, showPath(slot.file, cwd, env.HOME), env.HOME);
      loaded.claudeCode.files.push({ ...slot, found: result.found });
      loaded.problems.push(...result.problems);
      if (result.layer) loaded.claudeCode.layers.push(result.layer);
    }
  }
  return loaded;
}

/** Whether Claude Code's settings are read: on unless a scope says `claude_code: {settings: false}` (the project's word wins). */
function claudeCodeEnabled(layers: ConfigLayer[]): { value: boolean; from: string } {
  let enabled = { value: true, from: 'default' };
  for (const layer of layers) {
    const value = layer.data.claude_code?.settings;
    if (value !== undefined) enabled = { value, from: `${layer.scope} ${layer.at(['claude_code', 'settings'])}` };
  }
  return enabled;
}

/** One config file: absent is fine (no layer, no problem); present must be valid. */
export async function loadConfigLayer(file: string, scope: ConfigScope, shown: string): Promise<{ found: boolean; layer?: ConfigLayer; problems: Problem[] }> {
  const read = await readSettingsFile(file);
  if ('absent' in read) return { found: false, problems: [] };
  if ('unreadable' in read) return { found: true, problems: [{ file: shown, line: 1, column: 1, field: '', message: `cannot read the ${scope} config: ${read.unreadable}` }] };
  const { text } = read;
  const parsed = parseTicketText(text, 'yaml');
  if ('problems' in parsed) return { found: true, problems: parsed.problems.map((p) => ({ file: shown, field: '', ...p })) };
  const place = (p: FieldProblem): Problem => ({ file: shown, ...parsed.locator.locate(p.path, p.target), field: p.path.map(String).join('.'), message: p.message, ...(p.hint ? { hint: p.hint } : {}) });
  const warnings: Problem[] = parsed.warnings.map((p) => ({ file: shown, field: '', ...p }));

  await prepareConditions(parsed.data);
  const result = configFileSchema.safeParse(parsed.data);
  if (!result.success) {
    const problems = describeIssues(result.error.issues, parsed.data, configFieldNamesAt).map(place);
    return { found: true, problems: sortProblems([...warnings, ...problems]) };
  }
  const data = result.data;
  // A replay model named here is relative to this file, like a ticket's is to the ticket.
  const problems: FieldProblem[] = [];
  if (data.model !== undefined) {
    const model = await resolveModel(data.model, file, 'config file');
    problems.push(...model.problems);
    if (model.model) data.model = model.model;
  }
  for (const [alias, target] of Object.entries(data.models ?? {})) {
    const model = await resolveModel(target, file, 'config file');
    problems.push(...model.problems.map((p) => ({ ...p, path: ['models', alias] })));
    if (model.model) data.models![alias] = model.model;
  }
  if (problems.length > 0 || warnings.length > 0) return { found: true, problems: sortProblems([...warnings, ...problems.map(place)]) };
  const at = (fieldPath: (string | number)[]): string => `${shown}:${parsed.locator.locate(fieldPath, 'value').line}`;
  return { found: true, layer: { scope, file, shown, data, at }, problems: [] };
}

function showPath(file: string, cwd: string, home: string | undefined): string {
  const relative = path.relative(cwd, file);
  if (!relative.startsWith('..') && !path.isAbsolute(relative)) return relative;
  const homeDir = home ?? os.homedir();
  if (homeDir && file.startsWith(`${homeDir}${path.sep}`)) return `~${file.slice(homeDir.length)}`;
  return file;
}

function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort((a, b) => a.line - b.line || a.column - b.column);
}
