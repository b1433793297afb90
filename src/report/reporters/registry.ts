import { UsageError } from '../../errors.js';
import { suggestName } from '../../text/suggest-name.js';
import type { BatchReport, JsonSkippedReport } from '../batch-report.js';
import type { JsonRunReport } from '../json.js';
import { REPORTER_NAMES, type BatchStart, type Reporter, type ReporterContext, type ReporterKit, type ReporterName } from '../reporter.js';
import { Screen } from '../screen.js';
import { chooseChalk } from '../style.js';
import type { RunEvent } from '../../trace/events.js';
import type { RunResult } from '../../trace/result.js';
import { githubReporter } from './github.js';
import { jsonReporter } from './json.js';
import { junitReporter } from './junit.js';
import { liveReporter } from './live.js';
import { terminalReporter } from './terminal.js';

// Reporters picked by name (`--reporter json --reporter junit`), as vitest picks its own.

const FACTORIES: Record<ReporterName, (kit: ReporterKit) => Reporter> = {
  terminal: terminalReporter,
  live: liveReporter,
  json: jsonReporter,
  junit: junitReporter,
  github: githubReporter,
};

/**
 * The names given to `--reporter`, checked and in calling order, each once. Refused: a
 * name corral does not know (with the one probably meant), `junit` without `--junit <file>`
 * to write, and `terminal` with `live` (both would print every summary).
 */
export function parseReporterNames(names: readonly string[], options: { junit: boolean }): ReporterName[] {
  for (const name of names) {
    if (isReporterName(name)) continue;
    const suggestion = suggestName(name, REPORTER_NAMES);
    throw new UsageError(`--reporter ${JSON.stringify(name)}: no such reporter${suggestion ? `; did you mean ${suggestion}?` : ''} (reporters: ${REPORTER_NAMES.join(', ')})`);
  }
  const picked = REPORTER_NAMES.filter((name) => names.includes(name));
  if (picked.includes('junit') && !options.junit) throw new UsageError('--reporter junit writes the file --junit <file> names: give one');
  if (picked.includes('terminal') && picked.includes('live')) throw new UsageError('--reporter terminal and --reporter live both print the summaries and the table: pick one');
  return picked;
}

function isReporterName(name: string): name is ReporterName {
  return (REPORTER_NAMES as readonly string[]).includes(name);
}

/** What the choice of reporters depends on when none is named. */
export interface ReporterSituation {
  /** How many tickets the command runs (0 for `report merge`, which runs none). */
  runs: number;
  /** A CI system runs corral: nobody watches a live view. */
  ci: boolean;
  stderrIsTTY: boolean;
  /** GITHUB_ACTIONS=true. */
  githubActions: boolean;
}

export interface ReporterRequest {
  /** What `--reporter` named, if anything: then only those, and no defaults. */
  named?: readonly ReporterName[] | undefined;
  /** `--json`: adds json. */
  json: boolean;
  /** `--junit <file>`: adds junit. */
  junit: boolean;
}

/**
 * The reporters a command gets. Named ones replace the defaults, which are: the live view
 * for a batch at a terminal outside CI, else terminal; github under GitHub Actions.
 * `--json` and `--junit <file>` add theirs to either.
 */
export function chooseReporterNames(request: ReporterRequest, situation: ReporterSituation): ReporterName[] {
  const picked = new Set<ReporterName>();
  if (request.named && request.named.length > 0) for (const name of request.named) picked.add(name);
  else {
    picked.add(situation.runs > 1 && !situation.ci && situation.stderrIsTTY ? 'live' : 'terminal');
    if (situation.githubActions) picked.add('github');
  }
  if (request.json) picked.add('json');
  if (request.junit) picked.add('junit');
  return REPORTER_NAMES.filter((name) => picked.has(name));
}

/** The reporters of one command, called as one. */
export interface ReporterSet {
  readonly names: readonly ReporterName[];
  onBatchStart(batch: BatchStart): void;
  onRunStart(ticketId: string): void;
  onEvent(ticketId: string, event: RunEvent): void;
  onRunEnd(result: RunResult, report: JsonRunReport): void;
  onSkipped(report: JsonSkippedReport): void;
  /** Idempotent, so a `finally` may call it. */
  close(): void;
  onBatchEnd(report: BatchReport): Promise<void>;
  /** A line for the person on stderr, above a live view if one is drawn. */
  notice(line: string): void;
  /** Runs a prompt with the terminal to itself. */
  prompting<T>(ask: () => Promise<T>): Promise<T>;
}

/** Builds the reporters `names` names (checked as `--reporter` is), sharing one screen. */
export function createReporters(names: readonly string[], context: ReporterContext): ReporterSet {
  const picked = parseReporterNames(names, { junit: Boolean(context.junit) });
  const screen = new Screen(context.stdout, context.stderr);
  const kit: ReporterKit = {
    ...context,
    screen,
    out: chooseChalk(context.env, context.stdout.isTTY),
    err: chooseChalk(context.env, context.stderr.isTTY),
    stdoutIsJson: picked.includes('json'),
  };
  const reporters = picked.map((name) => FACTORIES[name](kit));
  let closed = false;
  return {
    names: picked,
    onBatchStart: (batch) => reporters.forEach((r) => r.onBatchStart?.(batch)),
    onRunStart: (ticketId) => reporters.forEach((r) => r.onRunStart?.(ticketId)),
    onEvent: (ticketId, event) => reporters.forEach((r) => r.onEvent?.(ticketId, event)),
    onRunEnd: (result, report) => reporters.forEach((r) => r.onRunEnd?.(result, report)),
    onSkipped: (report) => reporters.forEach((r) => r.onSkipped?.(report)),
    close() {
      if (closed) return;
      closed = true;
      for (const r of reporters) r.close?.();
    },
    async onBatchEnd(report) {
      // One after another: what each prints keeps the set's order on stdout.
      for (const r of reporters) await r.onBatchEnd?.(report);
    },
    notice: (line) => screen.notice(line),
    prompting: (ask) => screen.prompting(ask),
  };
}
