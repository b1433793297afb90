import { runGuardHook } from '../../agents/guard-hook.js';
import type { HookAnswer } from '../../agents/hook-protocol.js';
import type { dryRunGuard } from '../../run/dry-run.js';
import type { CliIo } from '../io.js';

/**
 * `corral guard hook --agent <kind>`: an agent's PreToolUse hook. Inside a run the running
 * corral decides over its socket; in a person's own session the repository's settings
 * decide here (as `corral explain --sandbox none` judges), an ask left to the agent's own prompt. The
 * guard's own code loads only then: inside a run, an agent waits for this process on
 * every tool call, and it only forwards the call.
 */
export async function guardHookCommand(options: { agent: 'claude-code' | 'codex' }, io: CliIo): Promise<number> {
  const stdin = await readAll(io.stdin);
  let guard: Awaited<ReturnType<typeof dryRunGuard>> | undefined;
  const answer = await runGuardHook(options.agent, stdin, io.env, async (call): Promise<HookAnswer> => {
    // Started before the guard's code loads (awaited one by one, so that each has begun
    // before that load holds this thread): the shell parser, whose WASM compiles on V8's
    // own threads, for a command; and git, asked for the repository around this folder.
    if (call.tool === 'Bash') void (await import('../../guard/shell/parser.js')).loadBashParser().catch(() => undefined);
    const root = guard === undefined ? (await import('../../git/git.js')).findRepoRoot(process.cwd()) : undefined;
    root?.catch(() => undefined);
    const [dryRun, { judgeCall }] = await Promise.all([import('../../run/dry-run.js'), import('../../run/call-pipeline.js')]);
    // Judged as without a sandbox: in a person's own session the agent runs its commands
    // on the host, where nothing of corral's contains them, whatever a run would get here.
    guard ??= await dryRun.dryRunGuard(undefined, process.cwd(), io.env, 'none', root);
    const { decision } = (await judgeCall(guard, call.tool, call.input)).verdict;
    return { effect: decision.effect, reason: `corral ${decision.effect === 'allow' ? 'allows' : decision.effect === 'deny' ? 'denies' : 'asks'}: rule ${decision.rule} (${decision.source ?? decision.scope}): ${decision.reason}` };
  });
  io.stdout.write(answer.stdout);
  if (answer.stderr) io.stderr.write(answer.stderr);
  return answer.exitCode;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString('utf8');
}
