import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError, type Problem } from '../errors.js';
import { prepareConditions } from '../policy/conditions.js';
import { describeIssues } from './describe-issues.js';
import { normaliseTicket } from './normalise.js';
import { parseTicketText, type TicketFormat } from './parse-text.js';
import type { FieldProblem, Locator } from './positions.js';
import { checkBase, resolveModel, resolveRepo, type FindRepoAndCommit } from './references.js';
import { TICKET_ID_PATTERN, ticketFileSchema } from './schema.js';
import type { Ticket } from './types.js';

export interface TicketCheck {
  /** Present exactly when there are no problems. */
  ticket?: Ticket;
  problems: Problem[];
}

/** Loads and validates a ticket; throws UsageError listing every problem of the file. */
export async function loadTicket(file: string, findRepo?: FindRepoAndCommit): Promise<Ticket> {
  const { ticket, problems } = await checkTicketFile(file, findRepo);
  if (!ticket) throw new UsageError(summariseProblems(file, problems), problems);
  return ticket;
}

/** `tickets/x.yaml: 3 problems` */
export function summariseProblems(file: string, problems: readonly Problem[]): string {
  return `${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`;
}

/**
 * Validates a ticket and reports every problem of the file, for `loadTicket` and for
 * commands that check many files. Problems name `file` as given, so they stay short.
 */
export async function checkTicketFile(file: string, findRepo?: FindRepoAndCommit): Promise<TicketCheck> {
  const absolute = path.resolve(file);
  const fileProblem = (message: string, hint?: string): TicketCheck => ({
    problems: [{ file, line: 1, column: 1, field: '', message, hint }],
  });

  const format = formatOf(file);
  if (!format) return fileProblem(`unsupported ticket file extension \`${path.extname(file)}\``, 'use .yaml, .yml or .md');
  let text: string;
  try {
    text = (await readFile(absolute, 'utf8')).replace(/^\uFEFF/, '');
  } catch (error) {
    return fileProblem(`cannot read the ticket: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }

  const parsed = parseTicketText(text, format);
  if ('problems' in parsed) {
    return { problems: parsed.problems.map((p) => ({ file, field: '', ...p })) };
  }
  const { locator } = parsed;
  const warnings: Problem[] = parsed.warnings.map((p) => ({ file, field: '', ...p }));
  const place = (p: FieldProblem): Problem => placeProblem(file, locator, p);
  const done = (problems: FieldProblem[]): TicketCheck => ({
    problems: sortProblems([...warnings, ...problems.map(place)]),
  });

  const { fields, problems } = addMarkdownTask(parsed.data, parsed.markdownBody);
  await prepareConditions(fields);
  const parsedFields = ticketFileSchema.safeParse(fields);
  if (!parsedFields.success) problems.push(...describeIssues(parsedFields.error.issues, fields));
  if (!isMapping(fields)) return done(problems);
  problems.push(...checkSetupNetwork(fields));

  const id = typeof fields['id'] === 'string' ? fields['id'] : path.parse(file).name;
  if (fields['id'] === undefined) problems.push(...checkFileNameId(id));
  const repo = await resolveRepo(fields['repo'], absolute, fields['base'], findRepo);
  if (repo.root) problems.push(...checkBase(fields['base'], { ...repo, root: repo.root }));
  const model = await resolveModel(fields['model'], absolute);
  problems.push(...repo.problems, ...model.problems);

  if (problems.length > 0 || warnings.length > 0 || !parsedFields.success || !repo.root) return done(problems);
  const ticket = normaliseTicket(parsedFields.data, {
    file: absolute,
    id,
    repo: repo.root,
    ...(repo.baseCommit ? { baseCommit: repo.baseCommit } : {}),
    task: parsedFields.data.task,
    model: model.model,
  });
  return { ticket, problems: [] };
}

/** `setup_network` and `network: {setup}` may both be written only when they agree. */
function checkSetupNetwork(fields: Record<string, unknown>): FieldProblem[] {
  const short = fields['setup_network'];
  const network = fields['network'];
  const long = isMapping(network) ? network['setup'] : undefined;
  if (typeof short !== 'boolean' || typeof long !== 'boolean' || short === long) return [];
  return [{ path: ['setup_network'], target: 'key', message: `says ${String(short)} while \`network.setup\` says ${String(long)}`, hint: 'keep one of them' }];
}

/** In a Markdown ticket the text after the front matter is the task, unless `task:` is also set. */
function addMarkdownTask(data: unknown, body: string | undefined): { fields: unknown; problems: FieldProblem[] } {
  if (!body || !isMapping(data)) return { fields: data, problems: [] };
  if (data['task'] === undefined) return { fields: { ...data, task: body }, problems: [] };
  return {
    fields: data,
    problems: [
      {
        path: ['task'],
        target: 'key',
        message: 'the task is given twice: in the front matter and after it',
        hint: 'keep one: remove `task:` or the text after the front matter',
      },
    ],
  };
}

/** The id defaults to the file name, which must then be a valid id too. */
function checkFileNameId(id: string): FieldProblem[] {
  if (TICKET_ID_PATTERN.test(id)) return [];
  return [
    {
      path: ['id'],
      target: 'key',
      message: `the file name gives the id \`${id}\`, which is not valid`,
      hint: 'rename the file, or set `id:` (letters, digits, `.`, `_` and `-`, starting with a letter or digit)',
    },
  ];
}

function formatOf(file: string): TicketFormat | null {
  const extension = path.extname(file).toLowerCase();
  if (extension === '.yaml' || extension === '.yml') return 'yaml';
  if (extension === '.md') return 'markdown';
  return null;
}

function placeProblem(file: string, locator: Locator, p: FieldProblem): Problem {
  return { file, ...locator.locate(p.path, p.target), field: p.path.map(String).join('.'), message: p.message, hint: p.hint };
}

function sortProblems(problems: Problem[]): Problem[] {
  return [...problems].sort((a, b) => a.line - b.line || a.column - b.column);
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
