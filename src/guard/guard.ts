import path from 'node:path';
import type { Parser } from 'web-tree-sitter';
import { fenceJudge } from './baseline.js';
import { decide, type Decision } from './decide.js';
import { bashFacts, checkKey, classify, pathFact, type CallFacts, type CallSite, type GuardSandbox, type PathFact } from './facts.js';
import { gitMetadataOf } from './paths/git-metadata.js';
import { UNKNOWN_ARG } from './unknown-arg.js';
import { isSecret } from '../policy/protected-paths.js';
import { holdsCredential } from './paths/tracked-secrets.js';
import { globCandidates, resolvePhysical } from './paths/resolve.js';
import { gitSync } from '../git/git.js';
import { stackPolicies, type PolicyLayer } from '../policy/stack.js';
import type { Policy } from '../policy/types.js';
import type { PolicyFile } from '../policy/schema.js';
import { analyseScript } from './shell/analyse.js';
import { loadBashParser } from './shell/parser.js';
import type { BuiltInRule } from '../policy/rule-ids.js';
import type { CallLocation } from '../trace/records.js';

/** A decision with the facts it was made from, for the trace, `corral explain` and `policy test`. */
export interface Verdict {
  decision: Decision;
  facts: CallFacts;
}

/** What the guard needs of a ticket: its fence, its labels, its checks and its own policy block. */
export interface GuardTicket {
  id: string;
  labels: string[];
  allow: string[];
  forbid: string[];
  /** The check commands, which the guard lets the agent run as the harness will. */
  checks: { run: string }[];
  policy?: PolicyFile;
  /** The ticket file, named as the source of its policy rules. */
  file?: string;
}

export interface GuardOptions {
  /** The worktree (or, for a dry run, the repository) the call runs in. */
  worktree: string;
  /** The run's private temp dir; null in a dry run. */
  tmpDir: string | null;
  /** The environment commands will see. */
  env: Record<string, string>;
  ticket: GuardTicket;
  /** The policy blocks of the scopes above the ticket (user, project); the ticket's own block is stacked on them here. */
  layers?: PolicyLayer[];
  /** Files inside the worktree that hooks run (absolute, physical): no call may write them. */
  hookScripts?: string[];
  /** The sandbox the run's commands get; default none (the guard is strict). */
  sandbox?: GuardSandbox;
  /** Secret-named files of the worktree the ticket lets the agent read (worktree-relative). */
  exposed?: string[];
}

/**
 * One call as the guard judges it. A command (`kind: execute`) is judged from its parsed
 * text; every other kind from the locations its tool declared.
 */
export interface GuardCall {
  tool: string;
  kind: string;
  /** The validated input. */
  input: Record<string, unknown>;
  locations: CallLocation[];
  /** Where a command starts; default the worktree root. */
  cwd?: string;
}

const LOCATED_KINDS = new Set(['read', 'search', 'edit']);

export interface Guard {
  decide(call: GuardCall): Promise<Verdict>;
  /** The worktree (physical path) that calls resolve against. */
  readonly worktree: string;
  readonly policy: Policy;
  /** The sandbox the guard judges Bash calls for. */
  readonly sandbox: GuardSandbox;
}

/** The guard of one run: site facts gathered once, the shell parser loaded on the first Bash call. */
export function createGuard(options: GuardOptions): Guard {
  const worktree = resolvePhysical(options.worktree, '/');
  const policy = stackPolicies([...(options.layers ?? []), { scope: 'ticket', file: options.ticket.policy, source: options.ticket.file }]);
  let tracked: { named: Set<string>; holding: string[] } | undefined;
  const exposed = new Set((options.exposed ?? []).map((file) => path.join(worktree, file)));
  const trackedFacts = (): { named: Set<string>; holding: string[] } => {
    if (tracked === undefined) {
      const named = listTrackedSecrets(worktree);
      tracked = { named: new Set(named), holding: named.filter((file) => !exposed.has(file) && holdsCredential(file)) };
    }
    return tracked;
  };
  const site: CallSite = {
    worktree,
    tmpDir: options.tmpDir === null ? null : resolvePhysical(options.tmpDir, '/'),
    env: options.env,
    git: gitMetadataOf(worktree),
    checkCommands: new Set(),
    trackedSecrets: () => trackedFacts().holding,
    harmlessTracked: (real) => trackedFacts().named.has(real) && !trackedFacts().holding.includes(real),
    sandbox: options.sandbox ?? { kind: 'none', network: true },
    scratch: [],
    exposed,
  };
  // A command in bubblewrap has its own /tmp (the run's temp dir) and a private $HOME.
  const bashSite: CallSite = site.sandbox.kind === 'bwrap' ? { ...site, scratch: scratchDirs(options.env) } : site;
  const context = {
    site,
    policy,
    fence: fenceJudge({ allow: options.ticket.allow, forbid: options.ticket.forbid }),
    ticket: { id: options.ticket.id, labels: options.ticket.labels, allow: options.ticket.allow, forbid: options.ticket.forbid },
  };
  let parser: Parser | undefined;
  const bashParser = async (): Promise<Parser> => {
    if (parser === undefined) {
      parser = await loadBashParser();
      for (const check of options.ticket.checks) {
        for (const command of analyseScript(parser, check.run, { cwd: worktree, env: options.env }).commands) {
          const argv = command.args.map((arg) => (arg.unknown === undefined ? arg.text : UNKNOWN_ARG));
          if (!argv.includes(UNKNOWN_ARG)) site.checkCommands.add(checkKey(command.cwd, argv));
        }
      }
    }
    return parser;
  };
  return {
    policy,
    worktree,
    sandbox: site.sandbox,
    async decide(call) {
      const { tool, input } = call;
      const command = call.kind === 'execute';
      if (!command && !LOCATED_KINDS.has(call.kind)) {
        // Fail closed: a kind the guard has no way to judge is never let through.
        const facts: CallFacts = { tool, input, commands: [], paths: [], problems: [] };
        return { decision: { effect: 'deny', rule: 'baseline.unknown-tool' satisfies BuiltInRule, scope: 'baseline', reason: `corral cannot judge a ${call.kind} call of ${tool}` }, facts };
      }
      const start = call.cwd === undefined ? worktree : path.resolve(worktree, call.cwd);
      const facts = command ? bashFacts(await bashParser(), String(input.command ?? ''), bashSite, input, start) : locationFacts(call, site);
      const decision = decide(facts, command ? { ...context, site: bashSite } : context);
      const script = decision.effect === 'deny' ? undefined : writtenHookScript(facts, options.hookScripts ?? []);
      if (script === undefined) return { decision, facts };
      const reason = `${path.relative(worktree, script)} is a hook script corral runs as trusted code; the agent may not change it`;
      return { decision: { effect: 'deny', rule: 'baseline.hook-script' satisfies BuiltInRule, scope: 'baseline', reason }, facts };
    },
  };
}

/** /tmp and the commands' $HOME, as real paths where they exist. */
function scratchDirs(env: Record<string, string>): string[] {
  return ['/tmp', ...(env.HOME && path.isAbsolute(env.HOME) && env.HOME !== '/' ? [env.HOME] : [])].map((dir) => {
    try {
      return resolvePhysical(dir, '/');
    } catch {
      return dir;
    }
  });
}

/** A hook script the call writes: the file itself, or a folder written whole that holds it. */
function writtenHookScript(facts: CallFacts, scripts: string[]): string | undefined {
  if (scripts.length === 0) return undefined;
  for (const fact of facts.paths) {
    if (fact.access !== 'write' || fact.path === null) continue;
    const target = fact.path;
    const hit = scripts.find((script) => script === target || (fact.recursive && script.startsWith(`${target}/`)));
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/** The facts of a call from the locations its tool declared. */
function locationFacts(call: GuardCall, site: CallSite): CallFacts {
  const facts: CallFacts = { tool: call.tool, input: call.input, commands: [], paths: [], problems: [] };
  for (const location of call.locations) {
    // The tool cleaned `..` out of the path before it was handed here (unlike the kernel would), so it is taken as given.
    const fact = pathFact(location.given, location.path, '/', location.access, location.recursive, location.label, site, false);
    facts.paths.push(location.recursive ? fact : ownStreamsOutside(fact));
    if (location.filter === undefined) continue;
    // The walk skips secret files anyway; a filter aimed at them is refused outright.
    const filter = location.filter;
    for (const candidate of globCandidates(filter.includes('/') ? filter : `**/${filter}`, location.path).paths) {
      const secret = classify(filter, candidate, location.access, false, `${call.tool} glob`, site, true);
      if (secret.secret) facts.paths.push(secret);
    }
  }
  return facts;
}

/**
 * For corral's own file tools, /dev/fd/N, /proc/self/fd/N and the standard streams are
 * corral's descriptors (its trace, its API connection), never the command's: outside.
 */
function ownStreamsOutside(fact: PathFact): PathFact {
  if (!fact.pseudo || fact.path === '/dev/null') return fact;
  return { ...fact, pseudo: false, inside: false, relative: null };
}

/** Secret files git tracks in the worktree. If git cannot list them, the worktree root stands in, so history reads are refused. */
function listTrackedSecrets(worktree: string): string[] {
  try {
    const listing = gitSync(worktree, ['ls-files', '-z'], { maxBuffer: 256 * 1024 * 1024 });
    return listing.split('\0').filter((name) => name !== '').map((name) => path.join(worktree, name)).filter(isSecret);
  } catch {
    return [worktree];
  }
}
