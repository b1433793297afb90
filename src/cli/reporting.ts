import path from 'node:path';
import { chooseReporterNames, createReporters, parseReporterNames, type ReporterRequest, type ReporterSet } from '../report/reporters/registry.js';
import { checkJunitFile } from './output-paths.js';
import type { Redactor } from '../text/redact.js';
import { isCi } from './ci.js';
import type { CliIo } from './io.js';

/** The options every command that reports a batch takes. */
export interface ReportingOptions {
  /** `--reporter`, once per name. */
  reporter?: string[];
  json?: boolean;
  junit?: string;
}

export interface Reporting {
  request: ReporterRequest;
  /** The JUnit file, resolved. */
  junit?: string | undefined;
}

/** Reads the reporting options before anything runs, so a misspelt reporter or a JUnit path into nowhere costs no run. */
export async function readReporting(options: ReportingOptions, cwd: string): Promise<Reporting> {
  const junit = options.junit === undefined ? undefined : path.resolve(cwd, options.junit);
  const named = options.reporter === undefined ? undefined : parseReporterNames(options.reporter, { junit: junit !== undefined });
  if (junit) await checkJunitFile(junit, options.junit!);
  return { request: { named, json: Boolean(options.json), junit: junit !== undefined }, junit };
}

/** The reporters for a command that runs `runs` tickets (none for a merge), here. */
export function openReporters(reporting: Reporting, runs: number, io: CliIo, cwd: string, redact: Redactor): ReporterSet {
  const names = chooseReporterNames(reporting.request, { runs, ci: isCi(io.env), stderrIsTTY: io.stderr.isTTY === true, githubActions: io.env.GITHUB_ACTIONS === 'true' });
  return createReporters(names, { stdout: io.stdout, stderr: io.stderr, env: io.env, cwd, redact, junit: reporting.junit });
}

