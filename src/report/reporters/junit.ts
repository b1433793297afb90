import { rename, rm, writeFile } from 'node:fs/promises';
import { InternalError } from '../../errors.js';
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
