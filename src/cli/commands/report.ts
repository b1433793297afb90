import path from 'node:path';
import { mergeReports, readBatchReport, shownPath } from '../../batch/merge.js';
import { checkJunitTarget, writeBatchArtifacts } from '../../report/batch-artifacts.js';
import { formatBatchTable } from '../../report/batch-table.js';
import { chooseChalk } from '../../report/style.js';
import type { CliIo } from '../io.js';

export interface ReportMergeOptions {
  json?: boolean;
  junit?: string;
}

/** `corral report merge`: shard reports in, one table (or JSON lines), one JUnit file, one exit code out. */
export async function reportMergeCommand(files: string[], options: ReportMergeOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const junit = options.junit ? path.resolve(cwd, options.junit) : undefined;
  if (junit) await checkJunitTarget(junit, options.junit!);
  const reports = await Promise.all(files.map((file) => readBatchReport(path.resolve(cwd, file), shownPath(path.resolve(cwd, file), cwd))));
  const merged = mergeReports(reports);
  const err = chooseChalk(io.env, io.stderr.isTTY);
  for (const gap of merged.gaps) io.stderr.write(`${err.red('incomplete:')} ${gap}\n`);
  const report = { tickets: merged.tickets, totals: merged.totals };
  if (options.json) {
    for (const ticket of report.tickets) io.stdout.write(`${JSON.stringify(ticket)}\n`);
    io.stdout.write(`${JSON.stringify(report.totals)}\n`);
  } else {
    io.stdout.write(formatBatchTable(report, chooseChalk(io.env, io.stdout.isTTY)));
  }
  await writeBatchArtifacts(report, { junit, env: io.env, cwd, stdout: options.json ? io.stderr : io.stdout });
  return report.totals.exitCode;
}
