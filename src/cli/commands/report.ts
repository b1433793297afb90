import path from 'node:path';
import { mergeReports, readBatchReport, shownPath } from '../../batch/merge.js';
import { chooseChalk } from '../../report/style.js';
import { openReporters, readReporting, type ReportingOptions } from '../reporting.js';
import type { CliIo } from '../io.js';

export type ReportMergeOptions = ReportingOptions;

// The shard reports were redacted when they were written; nothing new is printed from them.
const asWritten = (text: string): string => text;

/** `corral report merge`: shard reports in, one batch out through the reporters (a table, JSON lines, JUnit), one exit code. */
export async function reportMergeCommand(files: string[], options: ReportMergeOptions, io: CliIo): Promise<number> {
  const cwd = process.cwd();
  const reporting = await readReporting(options, cwd);
  const reports = await Promise.all(files.map((file) => readBatchReport(path.resolve(cwd, file), shownPath(path.resolve(cwd, file), cwd))));
  const merged = mergeReports(reports);
  const err = chooseChalk(io.env, io.stderr.isTTY);
  for (const gap of merged.gaps) io.stderr.write(`${err.red('incomplete:')} ${gap}\n`);
  const report = { tickets: merged.tickets, totals: merged.totals };
  // Nothing runs here, so no live view: the reporters get the batch whole.
  const reporters = openReporters(reporting, 0, io, cwd, asWritten);
  reporters.onBatchStart({ tickets: report.tickets.length, merged: true });
  reporters.close();
  await reporters.onBatchEnd(report);
  return report.totals.exitCode;
}
