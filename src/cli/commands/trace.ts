import { readTrace, resolveTraceFile } from '../../trace/read.js';
import { foldRun } from '../../trace/fold.js';
import { formatTraceSummary, listPrice, summarizeTrace } from '../../report/trace-summary.js';
import { chooseChalk } from '../../report/style.js';
import { createRedactor, secretValues } from '../../text/redact.js';
import type { CliIo } from '../io.js';
import type { TraceOptions } from '../main.js';

/** `corral trace <run-dir|trace.jsonl>`: the run at a glance, from its trace; also a trace cut short by a crash. */
export async function traceCommand(target: string, options: TraceOptions, io: CliIo): Promise<number> {
  // Tolerant: a crashed or damaged run is exactly what one looks at, so what can be read is shown.
  const trace = await readTrace(await resolveTraceFile(target), { mode: 'tolerant' });
  const summary = summarizeTrace(foldRun(trace.events, { price: listPrice }), trace.skipped.length);
  // A trace is redacted as it is written; this is for one written by hand or by an older corral.
  const redact = createRedactor(secretValues(io.env));
  if (options.json) io.stdout.write(redact(`${JSON.stringify({ trace: trace.file, ...summary })}\n`));
  else io.stdout.write(redact(formatTraceSummary(summary, chooseChalk(io.env, io.stdout.isTTY), io.stdout.isTTY ? io.stdout.columns : undefined)));
  return 0;
}
