import path from 'node:path';
import { readTextFile, writeTextFileAtomically } from '../../agents/install-file.js';
import {
  codexHooksTurnedOff,
  hookCommandFor,
  installGuardHook,
  runningCorral,
  INSTALL_SCOPES,
  settingsTarget,
  uninstallGuardHook,
  type GuardAgent,
  type InstallScope,
  type SettingsTarget,
} from '../../agents/install.js';
import { EXIT, UsageError } from '../../errors.js';
import { findRepoRoot } from '../../git/git.js';
import type { CliIo } from '../io.js';

export interface GuardInstallOptions {
  claudeCode?: boolean;
  codex?: boolean;
  scope?: string;
  /** The whole hook command, in place of `<corral> guard hook --agent <agent>`. */
  command?: string;
}

/** `corral guard install`: corral's guard as a PreToolUse hook in the agent's own settings. */
export async function guardInstallCommand(options: GuardInstallOptions, io: CliIo): Promise<number> {
  const targets = await targetsOf(options, io.env);
  const corral = options.command === undefined ? runningCorral(io.env) : undefined;
  for (const target of targets) {
    const command = options.command ?? hookCommandFor(target.agent, corral!.invocation);
    const edit = installGuardHook(await readSettings(target), target.agent, command, target.shown);
    if (edit.change === 'unchanged') {
      io.stdout.write(`corral's guard is already in ${target.shown}: PreToolUse runs ${command}\n`);
      continue;
    }
    const { created } = await writeSettings(target, edit.text);
    if (edit.change === 'updated') io.stdout.write(`updated corral's guard in ${target.shown}: PreToolUse runs ${command} (was ${edit.previous})\n`);
    else io.stdout.write(`added corral's guard to ${target.shown}${created ? ' (a new file)' : ''}: PreToolUse runs ${command}\n`);
    if (created && target.scope === 'local') io.stdout.write(`note: ${target.shown} is yours alone: keep it out of git (add it to .gitignore)\n`);
  }
  for (const target of targets) {
    if (target.agent === 'codex') {
      io.stdout.write(`note: Codex runs a new or changed hook only once you trust it: open /hooks in Codex to review it${target.scope === 'project' ? ' (and project hooks load only in a trusted project)' : ''}\n`);
      const config = await readTextFile(path.join(path.dirname(target.file), 'config.toml'));
      if (config !== null && codexHooksTurnedOff(config)) io.stdout.write(`warning: ${path.join(path.dirname(target.shown), 'config.toml')} turns Codex's hooks off ([features] hooks = false): the guard will not run until they are on\n`);
    }
    if (corral !== undefined && !corral.onPath && target.scope === 'project') {
      io.stdout.write(`note: corral is not on PATH, so ${target.shown} names it by its path on this machine; for a file your team shares, install with --command '<how your team runs corral> guard hook --agent ${target.agent}'\n`);
    }
  }
  return EXIT.passed;
}

/** `corral guard uninstall`: removes exactly corral's hooks; everything else in the file keeps its bytes. */
export async function guardUninstallCommand(options: GuardInstallOptions, io: CliIo): Promise<number> {
  for (const target of await targetsOf(options, io.env)) {
    const text = await readSettings(target);
    if (text === null) {
      io.stdout.write(`${target.shown} does not exist; nothing to remove\n`);
      continue;
    }
    const edit = uninstallGuardHook(text, target.agent, target.shown, options.command);
    if (edit.change === 'none') {
      io.stdout.write(`no corral guard in ${target.shown}; nothing to remove\n`);
      continue;
    }
    await writeSettings(target, edit.text);
    io.stdout.write(`removed corral's guard from ${target.shown} (${edit.removed} hook${edit.removed === 1 ? '' : 's'})\n`);
  }
  return EXIT.passed;
}

/** The settings file's text (null when there is none); one that cannot be read is a usage error naming it. */
async function readSettings(target: SettingsTarget): Promise<string | null> {
  try {
    return await readTextFile(target.file);
  } catch (error) {
    throw new UsageError(`cannot read ${target.shown}: ${describeFsError(error)}; nothing was changed`);
  }
}

async function writeSettings(target: SettingsTarget, text: string): Promise<{ created: boolean }> {
  try {
    return await writeTextFileAtomically(target.file, text);
  } catch (error) {
    throw new UsageError(`cannot write ${target.shown}: ${describeFsError(error)}; it is as it was`);
  }
}

function describeFsError(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException;
  return code ?? message ?? String(error);
}

async function targetsOf(options: GuardInstallOptions, env: NodeJS.ProcessEnv): Promise<SettingsTarget[]> {
  const scope = options.scope ?? 'project';
  if (!(INSTALL_SCOPES as readonly string[]).includes(scope)) throw new UsageError(`guard: --scope ${JSON.stringify(scope)} is not a scope (scopes: ${INSTALL_SCOPES.join(', ')})`);
  if (options.command !== undefined && !/\S/.test(options.command)) throw new UsageError('guard: --command is the hook command, e.g. "npx corral guard hook --agent claude-code"');
  // Neither flag: Claude Code, the agent whose settings corral already reads.
  const agents: GuardAgent[] = [...(options.claudeCode || !options.codex ? (['claude-code'] as const) : []), ...(options.codex ? (['codex'] as const) : [])];
  if (options.command !== undefined && agents.length > 1) throw new UsageError('guard: --command names one agent\'s hook command; give --claude-code or --codex, not both');
  const repo = scope === 'user' ? null : await findRepoRoot(process.cwd());
  return agents.map((agent) => settingsTarget(agent, scope as InstallScope, { repo, env }));
}
