import type { z } from 'zod';
import type { FieldProblem } from './positions.js';
import { fieldNamesAt } from './schema.js';
import { suggestName } from '../text/suggest-name.js';

type Issue = z.core.$ZodIssue;

// zod's messages speak about JavaScript types; people wrote YAML, so the messages
// here speak about text, lists and mappings, and each names what to write instead.

const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

const COMMAND_HINT = 'write a bash command, or a mapping `{run: ..., name: ..., timeout_seconds: ...}`';

/** What to write, by field name (the last named segment of the path). */
const FIELD_HINTS: Record<string, string> = {
  id: 'use letters, digits, `.`, `_` and `-`, starting with a letter or digit',
  task: 'write `task:` in YAML, or the text after the front matter in a Markdown ticket',
  allow: 'list the paths the run may change, e.g. `allow: ["src/**"]`',
  forbid: 'list the paths that may never change, e.g. `forbid: ["migrations/**"]`',
  setup: COMMAND_HINT,
  checks: COMMAND_HINT,
  run: 'a bash command line, e.g. `run: npm test`',
  budget: 'a mapping with `steps`, `tokens`, `minutes` and `usd`',
  policy: 'a mapping with `allow`, `ask` and `deny` patterns, `rules` and `default_effect`',
  env: 'letters, digits and `_`, not starting with a digit, e.g. `NPM_TOKEN`',
};

/** Turns zod issues on `input` into problems people can act on, one per mistake. */
export function describeIssues(issues: readonly Issue[], input: unknown, names: FieldNames = fieldNamesAt): FieldProblem[] {
  return issues.flatMap((issue) => describeIssue(issue, [], input, names));
}

/** The field names allowed at a path of the document, for did-you-mean. */
export type FieldNames = (path: readonly PropertyKey[]) => string[];

function describeIssue(issue: Issue, prefix: readonly PropertyKey[], input: unknown, names: FieldNames): FieldProblem[] {
  const path = [...prefix, ...issue.path];
  const value = valueAt(input, path);
  const hint = FIELD_HINTS[fieldName(path)];
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((key) => {
        const known = names(path);
        const suggestion = suggestName(key, known);
        return {
          path: [...path, key],
          target: 'key' as const,
          message: 'unknown field',
          hint: suggestion ? `did you mean \`${suggestion}\`?` : `known fields: ${known.join(', ')}`,
        };
      });
    case 'invalid_type':
      if (value === undefined) return [{ path, target: 'value', message: 'required field is missing', hint }];
      return [{ path, target: 'value', message: `expected ${expectedName(issue.expected)}, got ${describeValue(value)}`, hint: hint ?? listHint(issue.expected, value) }];
    case 'too_small':
      return [{ path, target: 'value', message: tooSmallMessage(issue), hint }];
    case 'too_big':
      return [{ path, target: 'value', message: `must be at most ${String(issue.maximum)}`, hint }];
    case 'invalid_value': {
      const allowed = issue.values.map((v) => `\`${String(v)}\``).join(', ');
      return [{ path, target: 'value', message: `expected one of ${allowed}, got ${describeValue(value)}`, hint }];
    }
    case 'custom': {
      const customHint: unknown = issue.params?.['hint'];
      return [{ path, target: 'value', message: issue.message, hint: typeof customHint === 'string' ? customHint : hint }];
    }
    case 'invalid_key': {
      // A mapping's key that breaks its rule (`env: {1X: a}`): the rule's own message.
      const key = issue.issues[0];
      return [{ path: [...path], target: 'key', message: key?.message ?? issue.message, hint }];
    }
    case 'invalid_union':
      return describeUnionIssue(issue, path, input, hint, names);
    default:
      // invalid_format carries the message written next to the check in schema.ts.
      return [{ path, target: 'value', message: issue.message, hint }];
  }
}

/**
 * A union (a command is text or a mapping; a policy is a mapping or a list) fails
 * as a whole. When the value has the shape of exactly one alternative, that
 * alternative's own issues say what is wrong; otherwise the value has neither shape.
 */
function describeUnionIssue(
  issue: Extract<Issue, { code: 'invalid_union' }>,
  path: PropertyKey[],
  input: unknown,
  hint: string | undefined,
  names: FieldNames,
): FieldProblem[] {
  const isShapeMismatch = (i: Issue) => i.code === 'invalid_type' && i.path.length === 0;
  const shaped = issue.errors.filter((branch) => !branch.every(isShapeMismatch));
  const [only] = shaped;
  if (shaped.length === 1 && only) return only.flatMap((i) => describeIssue(i, path, input, names));
  const expected = issue.errors
    .flat()
    .filter(isShapeMismatch)
    .map((i) => (i.code === 'invalid_type' ? expectedName(i.expected) : ''));
  const alternatives = [...new Set(expected)].join(' or ') || 'another kind of value';
  return [{ path, target: 'value', message: `expected ${alternatives}, got ${describeValue(valueAt(input, path))}`, hint }];
}

function tooSmallMessage(issue: Extract<Issue, { code: 'too_small' }>): string {
  if (issue.origin === 'array' || issue.origin === 'string') return 'must not be empty';
  if (issue.inclusive) return `must be ${String(issue.minimum)} or more`;
  return `must be greater than ${String(issue.minimum)}`;
}

function listHint(expected: string, value: unknown): string | undefined {
  if (expected === 'array' && !Array.isArray(value)) return 'write a list: `[a, b]`, or one `- item` per line';
  return undefined;
}

function expectedName(expected: string): string {
  return EXPECTED[expected] ?? expected;
}

function fieldName(path: readonly PropertyKey[]): string {
  const named = path.filter((segment): segment is string => typeof segment === 'string');
  return named[named.length - 1] ?? '';
}

function valueAt(input: unknown, path: readonly PropertyKey[]): unknown {
  let current = input;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return current;
}

function describeValue(value: unknown): string {
  if (value === null) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  // Quoted, so that the text "5" is not mistaken for the number 5.
  if (typeof value === 'string') return `\`${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}\``;
  return `\`${String(value)}\``;
}
