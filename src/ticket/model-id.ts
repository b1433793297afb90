// How a ticket names its model: an API model id, or `replay:<script>` for the offline one.
export const REPLAY_PREFIX = 'replay:';

export function isReplayModel(id: string): boolean {
  return id.startsWith(REPLAY_PREFIX);
}

/** The script path of a `replay:` id. */
export function replayScriptPath(id: string): string {
  return id.slice(REPLAY_PREFIX.length).trim();
}

export function replayModelId(scriptPath: string): string {
  return `${REPLAY_PREFIX}${scriptPath}`;
}

/** The model a ticket gets when neither it nor any config names one. */
export const DEFAULT_MODEL = 'claude-sonnet-4-6';
