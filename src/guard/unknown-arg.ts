/** What an argument the guard cannot know before the command runs stands for in facts, rules and approvals. */
export const UNKNOWN_ARG = '<unknown>';
