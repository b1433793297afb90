import { Chalk } from 'chalk';
import { totalTokens } from '../trace/records.js';
import type { BatchReport, JsonSkippedReport, TicketReport } from './batch-report.js';
import type { CheckResult } from '../trace/result.js';
import type { RunStatus } from '../trace/outcome.js';
import type { JsonRunReport } from './json.js';
import { formatSummary } from './summary.js';
import { makeVisible } from '../text/visible.js';
import { reportPath } from './report-path.js';

// JUnit XML is what CI servers (Jenkins, GitLab, Azure, the GitHub test-report actions)
// read to list test results. Each ticket is one testsuite holding one testcase: a suite,
// because the Jenkins junit-10 schema allows properties only there, and the properties
// (each check's verdict, what the run spent) are per ticket. schema/junit.xsd describes
// the exact shape written here; the tests validate against it and against junit-10.
//
// Many consumers (dorny/test-reporter, GitLab, junit viewers) show neither properties nor
// system-out, so what a person needs is also in the failure's message and text: the
// reason, every check's verdict, and the ticket's summary.

export interface JunitOptions {
  /** Ticket, patch and trace paths are shown relative to it. */
  cwd: string;
  /** When the batch started (xs:dateTime); left out so the output stays deterministic. */
  timestamp?: string;
}

type Outcome = 'passed' | 'failure' | 'error' | 'skipped';

// A failure is the agent's work found wanting; an error is that the run itself could not
// finish, which CI servers show differently (and a rerun may fix).
const OUTCOME: Record<RunStatus, Outcome> = {
  passed: 'passed',
  failed: 'failure',
  fence_violated: 'failure',
  host_changed: 'error',
  budget_exhausted: 'failure',
  blocked: 'failure',
  refused: 'failure',
  model_error: 'error',
  internal_error: 'error',
  interrupted: 'error',
};

/** How much of a failing check's output a failure shows: its end, where the errors usually are. */
export const CHECK_OUTPUT_LIMIT = 4096;

const plain = new Chalk({ level: 0 });

export function formatJunit(report: BatchReport, options: JunitOptions): string {
  const counts = countOutcomes(report.tickets);
  // junit-10 has no skipped count on <testsuites>; each <testsuite> carries its own.
  const totals = { tests: String(report.tickets.length), failures: String(counts.failure), errors: String(counts.error), time: seconds(report.totals.durationMs) };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites${attributes({ name: 'corral', ...totals })}>`,
    ...report.tickets.map((ticket) => formatTicketSuite(ticket, options)),
    '</testsuites>',
    '',
  ].join('\n');
}

function outcomeOf(ticket: TicketReport): Outcome {
  if (ticket.type === 'run') return OUTCOME[ticket.status];
  // A skip that fails the batch (the batch's money ran out) must look failed where CI shows it.
  return ticket.exitCode === null ? 'skipped' : 'failure';
}

function countOutcomes(tickets: TicketReport[]): Record<Outcome, number> {
  const counts = { passed: 0, failure: 0, error: 0, skipped: 0 };
  for (const ticket of tickets) counts[outcomeOf(ticket)]++;
  return counts;
}

// Only tags are indented: a line of element text is data, and padding it would change it.
const SUITE_PAD = '  ';
const CHILD_PAD = '    ';
const CASE_CHILD_PAD = '      ';

function formatTicketSuite(ticket: TicketReport, options: JunitOptions): string {
  const outcome = outcomeOf(ticket);
  const file = reportPath(options.cwd, ticket.ticket.file);
  const time = seconds(ticket.type === 'run' ? ticket.durationMs : 0);
  const suite = {
    name: ticket.ticket.id,
    tests: '1',
    failures: outcome === 'failure' ? '1' : '0',
    errors: outcome === 'error' ? '1' : '0',
    skipped: outcome === 'skipped' ? '1' : '0',
    time,
    ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    file,
  };
  const properties = ticket.type === 'run' ? runProperties(ticket, options.cwd) : skippedProperties(ticket);
  // `file` is what the GitHub annotators (mikepenz/action-junit-report) put a failure on;
  // without it they guess a file from the classname's last dotted part, `md` or `yaml`.
  const testcase = `${CHILD_PAD}<testcase${attributes({ name: ticket.ticket.id, classname: file, file, time })}>`;
  const children = ticket.type === 'run' ? runChildren(ticket, options.cwd) : skippedChildren(ticket);
  return [
    `${SUITE_PAD}<testsuite${attributes(suite)}>`,
    CHILD_PAD + formatProperties(properties),
    testcase,
    ...children.map((child) => CASE_CHILD_PAD + child),
    `${CHILD_PAD}</testcase>`,
    `${SUITE_PAD}</testsuite>`,
  ].join('\n');
}

function runChildren(run: JsonRunReport, cwd: string): string[] {
  const outcome = OUTCOME[run.status];
  const summary = formatSummary(run, plain, cwd);
  const children: string[] = [];
  if (outcome !== 'passed') {
    const tag = outcome === 'failure' ? 'failure' : 'error';
    children.push(`<${tag}${attributes({ type: run.status, message: failureMessage(run) })}>${text(`${failureDetails(run, cwd)}\n${summary}`)}</${tag}>`);
  }
  children.push(`<system-out>${text(summary)}</system-out>`);
  return children;
}

/** One line for consumers that show only a failure's message: why, and each check's verdict. */
export function failureMessage(run: JsonRunReport): string {
  const reason = makeVisible(run.reason);
  if (run.checks.length === 0) return reason;
  return `${reason} · checks: ${run.checks.map((check) => `${makeVisible(check.name)} ${checkVerdict(check)}`).join(', ')}`;
}

function skippedChildren(skip: JsonSkippedReport): string[] {
  const message = makeVisible(skip.reason);
  if (skip.exitCode !== null) return [`<failure${attributes({ type: `skipped_${skip.cause}`, message })}>${text(`${skip.reason}\n`)}</failure>`];
  return [`<skipped${attributes({ message })}/>`];
}

function skippedProperties(skip: JsonSkippedReport): [string, string][] {
  const properties: [string, string][] = [];
  if (skip.ticket.title) properties.push(['corral.title', skip.ticket.title]);
  properties.push(['corral.status', 'skipped'], ['corral.skip_cause', skip.cause]);
  if (skip.exitCode !== null) properties.push(['corral.exit_code', String(skip.exitCode)]);
  return properties;
}

function runProperties(run: JsonRunReport, cwd: string): [string, string][] {
  const properties: [string, string][] = run.ticket.title ? [['corral.title', run.ticket.title]] : [];
  properties.push(...run.checks.map((check): [string, string] => [`check:${check.name}`, checkVerdict(check)]));
  properties.push(
    ['corral.status', run.status],
    ['corral.exit_code', String(run.exitCode)],
    ['corral.steps', String(run.steps)],
    ['corral.tokens', String(totalTokens(run.usage))],
  );
  if (run.costUsd !== null) properties.push(['corral.cost_usd', String(run.costUsd)]);
  if (run.patch) properties.push(['corral.patch', reportPath(cwd, run.patch)]);
  if (run.branch) properties.push(['corral.branch', run.branch]);
  if (run.trace) properties.push(['corral.trace', reportPath(cwd, run.trace)]);
  return properties;
}

function checkVerdict(check: CheckResult): string {
  if (check.passed) return 'passed';
  if (check.timedOut) return 'timed out';
  return check.exitCode === null ? 'failed' : `failed (exit ${check.exitCode})`;
}

/** The properties element, its own lines padded to sit under the suite's other children. */
function formatProperties(properties: [string, string][]): string {
  const lines = properties.map(([name, value]) => `${CHILD_PAD}  <property${attributes({ name, value })}/>`);
  return ['<properties>', ...lines, `${CHILD_PAD}</properties>`].join('\n');
}

/** What went wrong, for the failure's text: failing checks with their output's end, fence breaches, host changes, denied calls. */
export function failureDetails(run: JsonRunReport, cwd: string): string {
  const lines = [run.reason];
  for (const check of run.checks.filter((c) => !c.passed)) {
    lines.push(`check ${check.name}: ${check.timedOut ? 'timed out' : `exit ${check.exitCode ?? 'unknown'}`}`);
    const tail = outputTail(check.output);
    if (tail !== '') lines.push(...tail.split('\n').map((line) => `    ${line}`));
  }
  for (const verdict of run.changes.filter((v) => !v.allowed)) {
    const { change } = verdict;
    const where = change.from ? `${change.from} → ${change.path}` : change.path;
    lines.push(`fence: ${where} (${change.kind}) ${verdict.reason ?? 'not allowed'}`);
  }
  for (const change of run.hostChanges ?? []) lines.push(`host: ${change}`);
  for (const record of run.denied) lines.push(`denied: ${record.call} (by ${record.rule}: ${record.reason})`);
  if (run.approvalsNeeded) lines.push(`approve: ${reportPath(cwd, run.approvalsNeeded)}`);
  return `${lines.join('\n')}\n`;
}

// Test runners colour their output; in a CI page the colour codes are only noise.
const COLOUR_CODE = /\x1b\[[0-9;:]*m/g;

/** The last CHECK_OUTPUT_LIMIT characters of a check's output, colour codes removed, saying how much was cut. */
function outputTail(output: string): string {
  const clean = output.replace(COLOUR_CODE, '').replace(/\s+$/, '');
  if (clean.length <= CHECK_OUTPUT_LIMIT) return clean;
  let tail = clean.slice(-CHECK_OUTPUT_LIMIT);
  // Do not start on the second half of a surrogate pair.
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1);
  return `… (${clean.length - tail.length} earlier characters cut)\n${tail}`;
}


/** JUnit times are seconds; three decimals keep milliseconds without float noise. */
function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

// Everything XML 1.0 can hold; the rest (most C0 controls, U+FFFE/FFFF, lone surrogates)
// makes the document unparsable even as a character reference, so it is shown instead.
const NOT_XML_CHAR = /[^\t\n\r\u{20}-\u{d7ff}\u{e000}-\u{fffd}\u{10000}-\u{10ffff}]/gu;

/** `text` with each character XML cannot hold written out visibly, as makeVisible does: `\x00`, `\u{fffe}`. */
export function xmlSafe(text: string): string {
  return text.replace(NOT_XML_CHAR, (char) => {
    const code = char.codePointAt(0)!;
    return code < 0x20 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u{${code.toString(16)}}`;
  });
}

const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\r': '&#13;', '\n': '&#10;', '\t': '&#9;' };

/** Element text: a parser would turn a raw CR into a newline, so it is a reference. */
function text(value: string): string {
  return xmlSafe(value).replace(/[&<>"'\r]/g, (char) => ENTITY[char]!);
}

/** Attribute values: a parser turns raw tabs and line breaks into spaces, so they are references too. */
function attributeValue(value: string): string {
  return xmlSafe(value).replace(/[&<>"'\r\n\t]/g, (char) => ENTITY[char]!);
}

function attributes(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([name, value]) => ` ${name}="${attributeValue(value)}"`)
    .join('');
}
