import { mkdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UsageError } from '../errors.js';
import { corralPackage } from '../package.js';
import { PROJECT_CONFIG_NAME } from './load.js';

export const EXAMPLE_TICKET = path.join('tickets', 'example.yaml');

/** The commented project config `corral init` writes. */
export function projectConfigTemplate(schemaPath: string): string {
  return `# yaml-language-server: $schema=${schemaPath}
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

/** The example ticket `corral init` writes. */
export function exampleTicketTemplate(schemaPath: string): string {
  return `# yaml-language-server: $schema=${schemaPath}
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
  const schemaFrom = (dir: string, name: string): string => path.relative(dir, path.join(schemaDir(), name));
  await writeFile(configFile, projectConfigTemplate(schemaFrom(repo, 'config.schema.json')), { flag: 'wx' });
  await mkdir(path.dirname(ticketFile), { recursive: true });
  await writeFile(ticketFile, exampleTicketTemplate(schemaFrom(path.dirname(ticketFile), 'ticket.schema.json')), { flag: 'wx' });
  return [configFile, ticketFile];
}

/** corral's published schemas, wherever this copy of corral is installed. */
function schemaDir(): string {
  return path.join(corralPackage().dir, 'schema');
}
