import { appendFile } from 'node:fs/promises';
import { githubAnnotations, githubStepSummary } from '../github.js';
import type { Reporter, ReporterKit } from '../reporter.js';

/**
 * `github`: at the batch's end, an `::error` annotation per ticket that needs a person
 * (workflow commands, on stdout unless it carries JSON lines, then stderr, which the
 * runner reads as well) and a table appended to $GITHUB_STEP_SUMMARY when there is one.
 */
export function githubReporter(kit: ReporterKit): Reporter {
  return {
    name: 'github',
    async onBatchEnd(report) {
      const workspace = kit.env.GITHUB_WORKSPACE;
      const stream = kit.stdoutIsJson ? kit.stderr : kit.stdout;
      for (const line of githubAnnotations(report, { cwd: kit.cwd, ...(workspace ? { workspace } : {}) })) stream.write(`${line}\n`);
      const summary = kit.env.GITHUB_STEP_SUMMARY;
      if (summary) await appendFile(summary, githubStepSummary(report, { cwd: kit.cwd }));
    },
  };
}
