import { appendFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import type { BatchReport } from './batch-report.js';
import { githubAnnotations, githubStepSummary } from './github.js';
import { formatJunit } from './junit.js';

export interface ArtifactOptions {
  /** Where to write the JUnit XML, if asked for. */
  junit?: string | undefined;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Where GitHub's workflow commands go: stdout, unless stdout carries JSON lines. */
  stdout: NodeJS.WritableStream;
}

/** The batch's files for CI: the JUnit report, and under GitHub Actions the annotations and the step summary. */
export async function writeBatchArtifacts(report: BatchReport, options: ArtifactOptions): Promise<void> {
  if (options.junit) await writeWhole(options.junit, formatJunit(report, { cwd: options.cwd }));
  if (options.env.GITHUB_ACTIONS !== 'true') return;
  const workspace = options.env.GITHUB_WORKSPACE;
  for (const line of githubAnnotations(report, { cwd: options.cwd, ...(workspace ? { workspace } : {}) })) options.stdout.write(`${line}\n`);
  const summary = options.env.GITHUB_STEP_SUMMARY;
  if (summary) await appendFile(summary, githubStepSummary(report, { cwd: options.cwd }));
}

/** Written beside the target and renamed over it, so a reader never sees half a report. */
async function writeWhole(file: string, text: string): Promise<void> {
  const partial = `${file}.${process.pid}.partial`;
  try {
    await writeFile(partial, text);
    await rename(partial, file);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** Refuses, before anything runs, a JUnit path whose folder does not exist: the report would be lost at the end. */
export async function checkJunitTarget(file: string, shown: string): Promise<void> {
  const folder = await stat(path.dirname(file)).catch(() => null);
  if (!folder?.isDirectory()) throw new UsageError(`--junit ${shown}: the folder ${path.dirname(shown) || '.'} does not exist`);
}
