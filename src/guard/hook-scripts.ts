import { statSync } from 'node:fs';
import path from 'node:path';
import type { HooksConfig } from '../policy/hooks-schema.js';
import { HOOK_EVENTS } from '../policy/hooks-schema.js';
import { resolvePhysical } from './paths/resolve.js';
import { analyseScript } from './shell/analyse.js';
import { loadBashParser } from './shell/parser.js';

/**
 * The files inside the worktree that the configured hook commands run or read: the
 * scripts a `"$CLAUDE_PROJECT_DIR"/scripts/guard.sh` names. Hooks are trusted code, so
 * the guard denies the agent any write to them; otherwise an agent could turn its own
 * guard hook into `exit 0`.
 */
export async function hookScriptFiles(hooks: HooksConfig | undefined, worktree: string, env: Record<string, string>): Promise<string[]> {
  const commands = HOOK_EVENTS.flatMap((event) => (hooks?.[event] ?? []).flatMap((group) => group.hooks.map((hook) => hook.command)));
  if (commands.length === 0) return [];
  const root = resolvePhysical(worktree, '/');
  const parser = await loadBashParser();
  const hookEnv = { ...env, CLAUDE_PROJECT_DIR: root, CORRAL_PROJECT_DIR: root };
  const files = new Set<string>();
  for (const command of commands) {
    for (const simple of analyseScript(parser, command, { cwd: root, env: hookEnv }).commands) {
      for (const arg of simple.args) {
        if (arg.unknown !== undefined || arg.text === '') continue;
        const file = resolvePhysical(arg.text, simple.cwd ?? root);
        const inside = path.relative(root, file);
        if (inside.startsWith('..') || path.isAbsolute(inside) || !isFile(file)) continue;
        files.add(file);
      }
    }
  }
  return [...files].sort();
}

function isFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
