import { UsageError } from '../../errors.js';
import { describeSandbox, describeVerdict, verdictJson } from '../../guard/describe-verdict.js';
import { dryRunGuard } from '../../run/dry-run.js';
import { TOOL_NAMES } from '../../tools/types.js';
import type { CliIo } from '../io.js';
import type { ExplainOptions } from '../main.js';
import { judgeCall } from '../../run/call-pipeline.js';

/** The input field a bare argument fills for each tool: `corral explain --tool Read .env`. */
const MAIN_FIELD: Record<string, string> = { Bash: 'command', Read: 'file_path', Write: 'file_path', Edit: 'file_path', Glob: 'pattern', Grep: 'pattern' };

/** What the other required fields hold when only the main one is given: a call is judged by where it goes, not by what it writes. */
const FILLER: Record<string, Record<string, string>> = { Write: { content: '' }, Edit: { old_string: '', new_string: '' } };

/** `corral explain`: the decision for one call, with the parsed commands, resolved paths and the deciding rule. Runs nothing. */
export async function explainCommand(words: string[], options: ExplainOptions, io: CliIo): Promise<number> {
  const text = words.join(' ');
  let input: unknown;
  if (text.trimStart().startsWith('{')) {
    try {
      input = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`the tool input is not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
    }
  } else {
    const field = MAIN_FIELD[options.tool];
    if (field === undefined && (TOOL_NAMES as readonly string[]).includes(options.tool)) throw new UsageError(`give the ${options.tool} input as JSON`);
    input = { ...FILLER[options.tool], [field ?? 'input']: text };
  }
  const guard = await dryRunGuard(options.ticket, process.cwd(), io.env, options.sandbox);
  const { verdict } = await judgeCall(guard, options.tool, input, options.cwd);
  if (options.json) io.stdout.write(`${JSON.stringify({ ...verdictJson(verdict), sandbox: guard.sandbox })}\n`);
  else io.stdout.write(`${[...describeVerdict(verdict), `sandbox: ${describeSandbox(guard.sandbox)}`].join('\n')}\n`);
  return 0;
}
