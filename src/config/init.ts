import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { PROJECT_CONFIG_NAME } from './load.js';

export const EXAMPLE_TICKET = path.join('tickets', 'example.yaml');

/** Where corral sits when a repository has it as its own (dev) dependency. */
const LOCAL_CORRAL = path.join('node_modules', 'corral');

/**
 * The first line of a file `corral init` writes: the editor's `$schema` line when there is
 * a path every clone shares, else a pointer to the editor setup. The files get committed,
 * so a path into one machine's global install would be wrong for everyone else.
 */
function schemaLine(schemaPath: string | undefined): string {
  if (schemaPath !== undefined) return `# yaml-language-server: $schema=${schemaPath}`;
  return '# No $schema line: corral is not a dependency of this repository (see "Editor setup" in its README).';
}

/** The commented project config `corral init` writes; `schemaPath` as in {@link schemaLine}. */
export function projectConfigTemplate(schemaPath: string | undefined): string {
  return `${schemaLine(schemaPath)}
# corral's project config. Scopes stack: the built-in baseline, your user config
# (~/.config/corral/config.yaml), this file, then each ticket. For single values the
# later scope wins; for rules a deny anywhere beats an allow anywhere.
# \`corral config\` prints the effective values and where each came from.

# The model of tickets that name none. Tickets may name an alias: \`model: fast\`.
model: strong
models:
  fast: claude-haiku-4-5
  strong: claude-sonnet-4-6

# Budget defaults; a ticket's own \`budget\` fields win.
budget:
  steps: 50
  minutes: 30

# How commands are isolated when a ticket does not say: auto, bwrap or none.
# sandbox: auto

# Denied or refused calls in a row after which a run stops as blocked (exit 4).
max_refusals_in_a_row: 5

policy:
  deny:
    - Bash(git push:*)
  allow:
    - Bash(npm test:*)
  # A call no rule covers is asked about: at a terminal you answer y/a/N, in CI it is
  # refused and written to approvals-needed.yaml in the run directory.
  # default_effect: ask
  # rules:
  #   - id: release-needs-a-person
  #     hook: run.start
  #     when: '"release" in ticket.labels'
  #     effect: deny
  #     reason: release tickets are not run by an agent

# Command hooks, in the same protocol as other coding agents' hooks.
# hooks:
#   PreToolUse:
#     - matcher: "Read|Edit|Write|Bash"
#       hooks:
#         - type: command
#           command: ./scripts/guard.sh
#           timeout: 60
`;
}

/** The example ticket `corral init` writes; `schemaPath` as in {@link schemaLine}. */
export function exampleTicketTemplate(schemaPath: string | undefined): string {
  return `${schemaLine(schemaPath)}
# An example ticket: what to do, which paths may change, and how to know it is done.
# Check it: corral check ${EXAMPLE_TICKET}    Run it: corral run ${EXAMPLE_TICKET}
title: Say what the ticket is in one line
task: |
  Describe the change as you would to a colleague: what is wrong, what done looks
  like, and anything the agent must not touch.
allow:
  - src/**
  - test/**
forbid:
  - package-lock.json
checks:
  - npm test
budget: {steps: 30, minutes: 15}
labels: [example]
`;
}

/**
 * Writes \`corral.yaml\` and an example ticket into the repository. Refuses, writing
 * nothing, when either already exists.
 */
export async function initProject(repo: string): Promise<string[]> {
  const configFile = path.join(repo, PROJECT_CONFIG_NAME);
  const ticketFile = path.join(repo, EXAMPLE_TICKET);
  for (const file of [configFile, ticketFile]) {
    if (await stat(file).then(() => true, () => false)) {
      throw new UsageError(`${path.relative(repo, file)} already exists; corral init never overwrites a file (nothing was written)`);
    }
  }
  // Relative to each file and inside the repository: node_modules/corral is where
  // `npm ci` puts corral on every clone, whichever copy of corral runs this.
  const local = (await hasLocalCorral(repo)) ? path.join(repo, LOCAL_CORRAL, 'schema') : undefined;
  const schemaFrom = (dir: string, name: string): string | undefined => (local === undefined ? undefined : toPosix(path.relative(dir, path.join(local, name))));
  await writeFile(configFile, projectConfigTemplate(schemaFrom(repo, 'config.schema.json')), { flag: 'wx' });
  await mkdir(path.dirname(ticketFile), { recursive: true });
  await writeFile(ticketFile, exampleTicketTemplate(schemaFrom(path.dirname(ticketFile), 'ticket.schema.json')), { flag: 'wx' });
  return [configFile, ticketFile];
}

/**
 * Whether the repository has corral as its own package: installed in its node_modules, or
 * named in its package.json (so `npm ci` will put it there, even if nobody has run it yet).
 */
async function hasLocalCorral(repo: string): Promise<boolean> {
  const installed = await readJson(path.join(repo, LOCAL_CORRAL, 'package.json'));
  if (installed?.['name'] === 'corral') return true;
  const manifest = await readJson(path.join(repo, 'package.json'));
  return ['dependencies', 'devDependencies', 'optionalDependencies'].some((field) => {
    const deps = manifest?.[field];
    return typeof deps === 'object' && deps !== null && 'corral' in deps;
  });
}

async function readJson(file: string): Promise<Record<string, unknown> | undefined> {
  try {
    const value: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A relative path with forward slashes, as a `$schema` reference is a URI reference. */
function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}
