/**
 * Whether the environment names a credential the SDK reads by itself (blank counts as
 * unset, as the SDK trims). Kept apart from the SDK so checking it loads nothing heavy.
 */
export function hasApiKey(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env['ANTHROPIC_API_KEY']?.trim() || env['ANTHROPIC_AUTH_TOKEN']?.trim());
}
