import type { ExternalAgent } from './find-cli.js';
import { askGuard } from './guard-socket.js';
import { formatHookAnswer, GUARD_SOCKET_ENV, mapAgentCall, parseHookInput, type CorralCall, type HookAnswer, type HookCall } from './hook-protocol.js';

/** Judges one of corral's own calls; `index` numbers the parts of an agent call that is several (a MultiEdit, a patch of many files). */
export type JudgeOne = (call: CorralCall, index: number, of: number) => Promise<HookAnswer>;

/** How strict each effect is: the strictest part of a call decides it. */
const STRICTNESS: Record<HookAnswer['effect'], number> = { allow: 0, ask: 1, deny: 2 };

/**
 * An agent's call judged as corral's own calls: allowed only when every part is, and
 * otherwise answered by the first part that is the strictest. A call no tool of corral's
 * describes is judged under its own name, which corral's guard denies as unknown.
 */
export async function judgeAgentCall(agent: ExternalAgent, call: HookCall, judgeOne: JudgeOne): Promise<HookAnswer> {
  const mapped = mapAgentCall(agent, call.toolName, call.toolInput);
  if (mapped.kind === 'internal') return { effect: 'allow', reason: `corral: ${call.toolName} acts only on the agent's own state` };
  const parts: CorralCall[] = mapped.kind === 'calls' ? mapped.calls : [{ tool: call.toolName, input: (call.toolInput ?? {}) as Record<string, unknown> }];
  let verdict: HookAnswer | undefined;
  for (const [index, part] of parts.entries()) {
    const answer = await judgeOne(part, index, parts.length);
    if (verdict === undefined || STRICTNESS[answer.effect] > STRICTNESS[verdict.effect]) verdict = answer;
    // A part denied decides the call: the rest need not be judged.
    if (answer.effect === 'deny') break;
  }
  return verdict ?? { effect: 'deny', reason: 'corral: the call has nothing to judge' };
}

/**
 * `corral guard hook`: the PreToolUse hook command. Inside a run (the guard socket's
 * variable is set) the running corral decides, its approver answering asks; in a person's
 * own session, `judgeLocally` decides from the repository's settings, an ask left to the
 * agent's own prompt. Whatever cannot be read or reached is a deny.
 */
export async function runGuardHook(agent: ExternalAgent, stdin: string, env: NodeJS.ProcessEnv, judgeLocally: JudgeOne): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const parsed = parseHookInput(stdin);
  if (!parsed.ok) return formatHookAnswer({ effect: 'deny', reason: `corral: ${parsed.reason}` });
  const socket = env[GUARD_SOCKET_ENV];
  const answer = socket ? await askGuard(socket, { agent, call: parsed.call }) : await judgeAgentCall(agent, parsed.call, judgeLocally).catch((error: unknown): HookAnswer => ({ effect: 'deny', reason: `corral could not judge the call: ${error instanceof Error ? error.message : String(error)}` }));
  return formatHookAnswer(answer);
}
