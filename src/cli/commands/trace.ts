import { readTrace } from '../../trace/read.js';
import { formatTraceSummary, summarizeTrace } from '../../report/trace-summary.js';
import { chooseChalk } from '../../report/style.js';
import type { CliIo } from '../io.js';
import type { TraceOptions } from '../main.js';

/** `corral trace <run-dir|trace.jsonl>`: the run at a glance, from its trace; also a trace cut short by a crash. */
export async function traceCommand(target: string, options: TraceOptions, io: CliIo): Promise<number> {
  const trace = await readTrace(target);
  const summary = summarizeTrace(trace.events, trace.skipped.length);
  if (options.json) io.stdout.write(`${JSON.stringify({ trace: trace.file, ...summary })}\n`);
  else io.stdout.write(formatTraceSummary(summary, chooseChalk(io.env, io.stdout.isTTY)));
  return 0;
}
