import path from 'node:path';
import { UsageError } from '../errors.js';
import { hasApiKey } from './api-key.js';
import type { Model } from './model.js';
import { isReplayModel, replayScriptPath } from '../ticket/model-id.js';
import { createReplayModel, loadReplayScript, type ReplayLoader } from './replay-model.js';


/** Why a real model cannot be used in this environment, or null when it can. */
export function missingKeyError(id: string, env: NodeJS.ProcessEnv): UsageError | null {
  if (isReplayModel(id) || hasApiKey(env)) return null;
  return new UsageError(
    `model ${id} needs an Anthropic API key, and ANTHROPIC_API_KEY is not set.\n` +
      `  Fix: export ANTHROPIC_API_KEY=<your key> (and ANTHROPIC_BASE_URL for a proxy), ` +
      `or run offline with a replay script: --model replay:<script.yaml>`,
  );
}

/**
 * Builds the model a run talks to. Everything that can be wrong with it (a broken
 * replay script, no API key) is found here, before a worktree exists.
 */
export async function prepareModel(
  id: string,
  env: NodeJS.ProcessEnv,
  shownFrom: string,
  api: { timeoutMs?: number; maxRetries?: number } = {},
  loadScript: ReplayLoader = loadReplayScript,
): Promise<Model> {
  if (isReplayModel(id)) {
    const file = replayScriptPath(id);
    return createReplayModel(id, await loadScript(file, path.relative(shownFrom, file) || file));
  }
  const noKey = missingKeyError(id, env);
  if (noKey) throw noKey;
  // Loaded only when a real model is used: the SDK is the heaviest import corral has.
  const { createAnthropicModel } = await import('./anthropic-model.js');
  return createAnthropicModel({ model: id, ...api });
}

/**
 * Loads the real model client's code (the SDK and Node's fetch classes, about 80 ms here)
 * when one of `modelIds` needs it, so a caller can have it load while it waits on a
 * process rather than on the way to the first request. Loading twice costs nothing.
 */
export async function preloadModelClient(modelIds: readonly string[]): Promise<void> {
  if (modelIds.some((id) => !isReplayModel(id))) await import('./anthropic-model.js');
}

/**
 * The model of a ticket an agent CLI works: the CLI talks to its API itself, so corral
 * never calls this one; it only names the model in the record.
 */
export function agentCliModel(id: string, agent: string): Model {
  return {
    id,
    complete: () => Promise.reject(new Error(`the ${agent} CLI talks to its model itself; corral's loop does not run`)),
  };
}
