import { rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { InternalError, UsageError } from '../../errors.js';
import { formatJunit } from '../junit.js';
import type { Reporter, ReporterKit } from '../reporter.js';

/** `junit`: the batch as JUnit XML, written at its end to the file `--junit` names. */
export function junitReporter(kit: ReporterKit): Reporter {
  const file = kit.junit;
  // The registry refuses `junit` without a file before it builds anything.
  if (!file) throw new InternalError('the junit reporter was built without a --junit file');
  return {
    name: 'junit',
    async onBatchEnd(report) {
      await writeWhole(file, formatJunit(report, { cwd: kit.cwd }));
    },
  };
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
