import { z } from 'zod';
import { RUN_STATUSES } from '../trace/outcome.js';
import type { JsonSkippedReport, JsonTotals } from './batch-report.js';
import type { JsonRunReport } from './json.js';

// One line of `corral run --json` (and `corral report merge --json`), as zod: the source of
// the published schema/report.schema.json. Every field a line can carry is here and is
// required; a fact a run does not have is `null` or `[]`, never a missing key, so a
// consumer's `jq .branch` or a typed reader never has to guess.

export const REPORT_SCHEMA_ID = 'https://corral.dev/schema/report.schema.json';

const count = z.number().int().nonnegative();
const maybeString = (description: string) => z.string().nullable().meta({ description });

const usageSchema = z
  .strictObject({
    inputTokens: count.meta({ description: 'Input tokens not read from the prompt cache.' }),
    outputTokens: count.meta({ description: 'Tokens the model wrote.' }),
    cacheReadTokens: count.meta({ description: 'Input tokens read from the prompt cache.' }),
    cacheWriteTokens: count.meta({ description: 'Input tokens written to the prompt cache.' }),
  })
  .meta({ description: 'Tokens spent, by kind.' });

const ticketRefSchema = z
  .strictObject({
    id: z.string().meta({ description: 'The ticket id (its branch is `corral/<id>`).' }),
    file: z.string().meta({ description: 'The ticket file, as corral found it.' }),
    title: maybeString('The ticket title, or null when it has none.'),
  })
  .meta({ description: 'Which ticket this line is about.' });

const changeSchema = z.strictObject({
  kind: z.enum(['added', 'modified', 'deleted', 'renamed', 'mode', 'type']),
  path: z.string().meta({ description: 'Repository-relative path.' }),
  from: z.string().optional().meta({ description: 'The old path of a rename; only on renames.' }),
});

const verdictSchema = z.strictObject({
  change: changeSchema,
  allowed: z.boolean().meta({ description: 'Whether the fence allows this change.' }),
  reason: z.string().optional().meta({ description: 'Why a change is not allowed; only on changes that are not.' }),
});

const checkSchema = z.strictObject({
  name: z.string(),
  command: z.string(),
  passed: z.boolean(),
  exitCode: z.number().int().nullable().meta({ description: 'null when the command was killed or timed out.' }),
  timedOut: z.boolean(),
  durationMs: z.number().nonnegative(),
  output: z.string().meta({ description: 'What the check printed (stdout and stderr), redacted.' }),
});

const callSchema = z.strictObject({
  step: count,
  tool: z.string(),
  effect: z.enum(['allow', 'ask', 'deny']),
  rule: z.string().meta({ description: 'The deciding rule.' }),
  scope: z.string().optional().meta({ description: 'Where the deciding rule lives: baseline, user, project, ticket, default or hook.' }),
  reason: z.string(),
  source: z.string().optional().meta({ description: 'The file (and line) the deciding rule was written in, when it has one.' }),
  answer: z.enum(['yes', 'always', 'remembered', 'no', 'unattended', 'interrupted']).optional().meta({ description: 'For an ask: what the approver answered.' }),
  call: z.string().meta({ description: 'A short rendering of the call.' }),
});

const REPORT_VERSION_FIELD = z.literal(1).meta({ description: 'The report format version.' });

export const runLineSchema = z
  .strictObject({
    corral: REPORT_VERSION_FIELD,
    type: z.literal('run'),
    runId: z.string().meta({ description: 'The run directory name; empty when the run failed before it had one.' }),
    ticket: ticketRefSchema,
    status: z.enum(RUN_STATUSES).meta({ description: 'How the run ended.' }),
    exitCode: z.number().int().meta({ description: 'The exit code this run alone would give.' }),
    reason: z.string().meta({ description: 'One line saying why the run ended as it did.' }),
    budgetExhausted: z.enum(['steps', 'tokens', 'minutes', 'usd']).nullable().meta({ description: 'Which budget ran out when status is budget_exhausted, else null.' }),
    model: z.string().meta({ description: 'The model id the run used.' }),
    steps: count.meta({ description: 'Model turns taken.' }),
    usage: usageSchema,
    costUsd: z.number().nonnegative().nullable().meta({ description: 'What the run cost in US dollars; null when the model has no known price.' }),
    durationMs: z.number().nonnegative().meta({ description: 'Wall time of the run.' }),
    baseCommit: maybeString('The commit the worktree started from; null when the run ended before it had one.'),
    hostUncommitted: z
      .strictObject({ modified: count, staged: count, untracked: count, inRun: z.boolean() })
      .nullable()
      .meta({ description: "What the host checkout held beyond its HEAD as the run began (git status: modified, staged, untracked files); inRun: the run started from it (--from-worktree), else none of it was part of the run. null when the run ended before it had a worktree." }),
    changes: z.array(verdictSchema).meta({ description: "Each changed path with the fence's verdict." }),
    hostChanges: z.array(z.string()).meta({ description: 'How the host repository changed during the run (HEAD, refs, config, hooks, index); [] when it did not.' }),
    setup: z
      .array(
        z.strictObject({
          name: z.string(),
          exitCode: z.number().int().nullable().meta({ description: 'null when the command was killed or timed out.' }),
          timedOut: z.boolean(),
          durationMs: z.number().nonnegative(),
          output: z.string().meta({ description: 'What the command printed (stdout and stderr), capped and redacted.' }),
        }),
      )
      .meta({ description: "The ticket's setup commands that ran, in order; a failed one is the last." }),
    checks: z.array(checkSchema).meta({ description: 'The last round of checks.' }),
    checkRoundsUsed: count.meta({ description: 'How many rounds of checks ran.' }),
    toolCalls: count.meta({ description: 'Tool calls the agent made.' }),
    denied: z.array(callSchema).meta({ description: 'Calls the guard refused.' }),
    asked: z.array(callSchema).meta({ description: 'Calls the guard asked about, approved or refused, with the answer.' }),
    approvalsNeeded: maybeString('The file of refused asks written as ready-to-paste allow rules (unattended runs); null when there were none.'),
    followUps: z.array(z.string()).meta({ description: "The agent's `QUEUE:` lines: problems it noticed outside the task." }),
    finalText: z.string().meta({ description: "The agent's last message." }),
    runDir: z.string().meta({ description: 'The run directory; empty when the run failed before it had one.' }),
    patch: maybeString('The patch of the changes; null when there is none.'),
    trace: z.string().meta({ description: 'The trace file (trace.jsonl); empty when the run failed before it had one.' }),
    branch: maybeString('The branch the changes were committed to; null when none was made.'),
    sandbox: z.enum(['bwrap', 'none']).nullable().meta({ description: 'What commands ran in; null when no command ran.' }),
    worktree: maybeString('Where the worktree was kept (--keep); null when it was removed.'),
    instructions: z.array(z.string()).meta({ description: 'The AGENTS.md and CLAUDE.md files the system prompt carried, repository-relative (`path (cut)` when only its start fitted); [] when none.' }),
    warnings: z.array(z.string()).meta({ description: 'Things that went wrong without changing the outcome.' }),
  })
  .meta({ title: 'run', description: 'A ticket that ran.' });

export const skippedLineSchema = z
  .strictObject({
    corral: REPORT_VERSION_FIELD,
    type: z.literal('skipped'),
    ticket: ticketRefSchema,
    status: z.literal('skipped'),
    cause: z.enum(['bail', 'max_usd', 'interrupted']).meta({ description: 'Why the batch did not start it.' }),
    reason: z.string().meta({ description: 'One line a person can act on.' }),
    exitCode: z.number().int().nullable().meta({ description: 'The exit code this skip adds to the batch: 3 when the batch budget ran out, else null.' }),
  })
  .meta({ title: 'skipped', description: 'A ticket the batch did not start.' });

export const totalsLineSchema = z
  .strictObject({
    corral: REPORT_VERSION_FIELD,
    type: z.literal('totals'),
    tickets: count.meta({ description: 'Ticket lines in the report.' }),
    byStatus: z.record(z.string(), count).meta({ description: 'Tickets per status, skipped included; statuses with no ticket are left out.' }),
    exitCode: z.number().int().meta({ description: "The batch's exit code." }),
    usage: usageSchema,
    costUsd: z.number().nonnegative().nullable().meta({ description: 'Summed over the tickets whose cost is known; null when none is.' }),
    costUnknown: count.meta({ description: 'Tickets whose cost is unknown.' }),
    durationMs: z.number().nonnegative().meta({ description: 'Wall time of the batch (of the longest shard, once merged).' }),
    shards: z
      .array(z.strictObject({ index: z.number().int().positive(), count: z.number().int().positive() }))
      .meta({ description: 'The shard this report covers, or every shard a merged report joined.' }),
  })
  .meta({ title: 'totals', description: 'The last line of a batch report.' });

export const reportLineSchema = z.discriminatedUnion('type', [runLineSchema, skippedLineSchema, totalsLineSchema]);

/** The published JSON Schema of one report line. */
export function reportJsonSchema(): Record<string, unknown> {
  const { $schema, ...rest } = z.toJSONSchema(reportLineSchema, { target: 'draft-2020-12' });
  return {
    $schema,
    $id: REPORT_SCHEMA_ID,
    title: 'corral report line',
    description: 'One line of `corral run --json` or `corral report merge --json`: a ticket that ran, a ticket the batch skipped, or the totals (always last).',
    ...rest,
  };
}

// The writer's types and this schema must describe the same lines; a drift fails typecheck.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameRun: Same<z.output<typeof runLineSchema>, JsonRunReport> = true;
const sameSkipped: Same<z.output<typeof skippedLineSchema>, JsonSkippedReport> = true;
const sameTotals: Same<z.output<typeof totalsLineSchema>, JsonTotals> = true;
void [sameRun, sameSkipped, sameTotals];
