import path from 'node:path';
import { UsageError } from '../errors.js';
import { hasApiKey } from './api-key.js';
import type { Model } from './model.js';
import { createReplayModel, loadReplayScript } from './replay-model.js';

export const DEFAULT_MODEL = 'claude-sonnet-4-6';
export const REPLAY_PREFIX = 'replay:';

export function isReplayModel(id: string): boolean {
  return id.startsWith(REPLAY_PREFIX);
}

/**
 * Builds the model a run talks to. Everything that can be wrong with it (a missing
 * replay script, no API key) is found here, before a worktree exists.
 */
export async function prepareModel(id: string, env: NodeJS.ProcessEnv, shownFrom: string): Promise<Model> {
  if (isReplayModel(id)) {
    const file = id.slice(REPLAY_PREFIX.length);
    const script = await loadReplayScript(file, path.relative(shownFrom, file) || file);
    return createReplayModel(id, script);
  }
  if (!hasApiKey(env)) {
    throw new UsageError(
      `model ${id} needs an Anthropic API key, and ANTHROPIC_API_KEY is not set.\n` +
        `  Fix: export ANTHROPIC_API_KEY=<your key> (and ANTHROPIC_BASE_URL for a proxy), ` +
        `or run offline with a replay script: --model replay:<script.yaml>`,
    );
  }
  // Loaded only when a real model is used: the SDK is the heaviest import corral has.
  const { createAnthropicModel } = await import('./anthropic-model.js');
  return createAnthropicModel({ model: id });
}

/** Loads a ticket's replay script only to report its problems, so a batch finds them before it starts. */
export async function checkReplayScript(id: string | undefined, shownFrom: string): Promise<void> {
  if (id === undefined || !isReplayModel(id)) return;
  const file = id.slice(REPLAY_PREFIX.length);
  await loadReplayScript(file, path.relative(shownFrom, file) || file);
}
