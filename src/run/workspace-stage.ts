import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Guard } from '../guard/guard.js';
import { createSandbox, type Sandbox } from '../guard/sandbox/sandbox.js';
import { resourceStack } from '../proc/disposable-stack.js';
import { trackLeftover } from '../proc/leftovers.js';
import { findSubreaper, NO_SUBREAPER_WARNING } from '../proc/subreaper.js';
import type { ToolContext } from '../tools/types.js';
import { hostDifferences, recordHostState, type HostState } from '../workspace/host-integrity.js';
import { openRepoCache, type RepoCache } from '../workspace/repo-cache.js';
import { countUncommitted } from '../workspace/working-tree.js';
import { createWorktree, releaseWorktree, removeWorktree, runTempDirOf, type Worktree } from '../workspace/worktree.js';
import { agentControlDir } from '../agents/drivers.js';
import { agentCliFolder } from '../agents/find-cli.js';
import { corralPackage } from '../package.js';
import { createCallPipeline, type CallPipeline } from './call-pipeline.js';
import type { CommandSite } from './checks.js';
import type { Run } from './prepare.js';
import { buildToolEnv } from './tool-env.js';
import { claudeCodeNotice, toolEnvChanges, type Settings } from '../config/settings.js';
import { checkReadPaths } from '../guard/sandbox/home-view.js';
import { SECRET_NAME } from '../text/redact.js';

const OUTPUT_CAP = 30_000;

/** What the agent works in: made once per run, released once, in reverse order. */
export interface Workspace {
  worktree: Worktree;
  /**
   * The host repository as it was before the worktree was made. Its result branches give
   * the tip of `corral/<id>` as the run began: a run commits over it only if nobody moved it meanwhile.
   */
  hostBefore: HostState;
  sandbox: Sandbox;
  guard: Guard;
  pipeline: CallPipeline;
  /** Where checks run (the agent's Bash calls run alike). */
  commands: CommandSite;
  /** Where setup runs: the network unless the ticket turned it off, and the package cache. */
  setupCommands: CommandSite;
  /** This repository's cache (package downloads, `node_modules` by lockfile); null without a cache folder. */
  repoCache: RepoCache | null;
  toolContext(signal: AbortSignal): ToolContext;
  /**
   * The agent's phase begins: its commands see the worktree's secret files as empty from
   * now on, and their supervisor starts now rather than at the first command, so that its
   * start (a perl; in bubblewrap, a sandbox too) overlaps the guard's first decision.
   */
  beginAgentPhase(): void;
  /** How the host repository differs from `hostBefore`; empty when it does not. */
  hostChanges(): Promise<string[]>;
}

/**
 * The workspace of a run, made while the model reads the task: begun once the first request
 * is on its way (`begin`), `ready` once made, `failed` aborted if that fails. Disposing it
 * waits for the making to end either way and then releases what was made: the worktree
 * (removed, or kept and unlocked), the temp dir. A release that fails becomes one of the
 * run's warnings; it never hides the result.
 */
export interface RunWorkspace extends AsyncDisposable {
  /** Starts making the workspace; once, later calls do nothing. */
  begin(): void;
  /**
   * The run ended before it needed a workspace (no request went out: interrupted, the API
   * unreachable): none is made, and `ready` rejects with WorkspaceForgone. Does nothing
   * once begun.
   */
  forgo(): void;
  ready: Promise<Workspace>;
  failed: AbortSignal;
  /** Starts removing the worktree: the patch is written and nothing more is read from it. */
  release(): void;
  /** The patch could not be written (or `why`), so the worktree is the only copy of the work: it stays. */
  keep(why?: string): void;
  /** Where the worktree stays after the run, if it does. */
  readonly kept: string | undefined;
}

/** Why a run has no workspace though nothing failed: it ended before it needed one. */
export class WorkspaceForgone extends Error {
  constructor() {
    super('the run ended before its workspace was needed');
    this.name = 'WorkspaceForgone';
  }
}

export function openWorkspace(run: Run): RunWorkspace {
  let decide!: (begun: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (decide = resolve));
  const stack = resourceStack();
  const failure = new AbortController();
  let made: Worktree | undefined;
  let keep = run.options.keep;
  let removal: Promise<void> | undefined;
  const remove = (worktree: Worktree): Promise<void> =>
    (removal ??= removeWorktree(worktree).catch((error: unknown) => run.warn(`could not remove the worktree ${worktree.dir}: ${String(error)}`)));
  // Begun on a later turn of the event loop than `begin`: loading the guard and starting
  // each git process hold this thread, and a request just handed over may still be on it.
  const ready = decided.then(async (begun) => {
    if (!begun) throw new WorkspaceForgone();
    await new Promise<void>((resolve) => setImmediate(resolve));
    return makeWorkspace(run, (sandbox) => stack.defer(() => sandbox.close()), (worktree, tempDir) => {
      made = worktree;
      stack.defer(() => (keep ? releaseWorktree(worktree) : remove(worktree)));
      // Like the worktree: gone even when a second Ctrl-C ends the process before this stack is released.
      const forget = trackLeftover(() => rmSync(tempDir, { recursive: true, force: true }));
      stack.defer(async () => {
        await rm(tempDir, { recursive: true, force: true }).catch(() => run.warn(`could not remove ${tempDir}`));
        forget();
      });
    });
  });
  const settled = ready.then(
    () => undefined,
    () => failure.abort(),
  );
  return {
    begin: () => decide(true),
    forgo: () => decide(false),
    ready,
    failed: failure.signal,
    release: () => {
      if (made !== undefined && !keep) void remove(made);
    },
    keep: (why = 'the patch could not be written') => {
      keep = true;
      if (made !== undefined) run.warn(`the worktree was kept because ${why}: ${made.dir}`);
    },
    get kept() {
      return keep ? made?.dir : undefined;
    },
    async [Symbol.asyncDispose]() {
      await settled;
      await stack.disposeAsync();
    },
  };
}

/** The worktree, temp dir, sandbox, guard and call pipeline, each registered for release as soon as it exists. */
async function makeWorkspace(run: Run, started: (sandbox: Sandbox) => void, made: (worktree: Worktree, tempDir: string) => void): Promise<Workspace> {
  const { ticket, settings, emit, options } = run;
  // Which child subreaper ends the commands' processes without a sandbox is found (once
  // per process) while the worktree is made, not after.
  const reaperFound = ticket.sandbox === 'bwrap' ? undefined : findSubreaper();
  // Side by side: making a worktree changes none of what the host state records (refs,
  // HEAD, config, hooks, the host index), and nothing runs before both are done.
  const hostRecorded = recordHostState(ticket.repo, undefined, [path.dirname(run.runDir)]);
  const worktreeMade = createWorktree(ticket.repo, run.baseCommit, ticket.id, { keep: options.keep, runDir: run.runDir, secrets: run.secrets });
  // The shell parser loads while git works (this thread mostly waits for it), not at the
  // first Bash call. A failed load is the guard's to report, at the call that needs it.
  void import('../guard/shell/parser.js').then(({ loadBashParser }) => loadBashParser()).catch(() => undefined);
  const [host, created] = await Promise.allSettled([hostRecorded, worktreeMade]);
  if (created.status === 'rejected') throw created.reason;
  const worktree = created.value;
  // Killed runs' worktrees found on the way: their work is saved before they go, and said where.
  for (const found of worktree.salvaged ?? []) {
    if (found.kind !== 'worktree') continue;
    if (found.kept !== undefined) run.warn(`a killed run's worktree was kept: ${found.path}: ${found.kept}`);
    else run.warn(`a killed run's worktree was removed: ${found.path}; ${found.patch ? `its work is in ${found.patch}` : 'it held no change'}`);
  }
  // Named after the worktree, so that a killed run's temp dir goes with its worktree
  // (corral clean, the next run).
  const tempDir = runTempDirOf(worktree.dir);
  made(worktree, tempDir);
  if (host.status === 'rejected') throw host.reason;
  const hostBefore = host.value;
  // What the host checkout holds beyond HEAD is named, so nobody thinks the agent saw it when it did not.
  const uncommitted = countUncommitted(hostBefore.checkout);
  emit({ type: 'worktree', dir: worktree.dir, baseCommit: run.baseCommit, hostUncommitted: { ...uncommitted, inRun: run.fromWorktree } });
  // mkdir fails on anything already there.
  await mkdir(tempDir, { mode: 0o700 });
  // Claude Code's `env` under the config's and the ticket's (which may name a secret of it to pass it).
  // Hooks run trusted, outside the sandbox, with the network: no offline settings.
  const envChanges = toolEnvChanges(settings, ticket.env);
  const env = buildToolEnv(options.env, envChanges, { tmpDir: tempDir });
  const claudeNotice = claudeCodeNotice(settings);
  if (claudeNotice !== null) run.warn(claudeNotice);
  for (const [name, sourced] of Object.entries(settings.claudeCodeEnv)) {
    if (SECRET_NAME.test(name) && !Object.hasOwn(ticket.env, name)) run.warn(`env ${name} (${sourced.from}) looks like a secret, so tools do not get it; name it in the ticket's env: to pass it`);
  }
  const repoCache = ticket.setup.length === 0 ? null : await openRepoCache(ticket.repo, options.env).catch((error: unknown) => {
    run.warn(`no package cache for setup: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  });
  // Loaded here, while the first request is out: the guard's shell analysis is the
  // largest part of corral's code, and nothing before that request needs it.
  const [{ hookScriptFiles }, { createGuard }] = await Promise.all([import('../guard/hook-scripts.js'), import('../guard/guard.js')]);
  // Hooks run trusted and unsandboxed, so the scripts they name are kept from every
  // writer: the guard denies the agent's writes, the sandbox binds them read-only, and a
  // script that changes anyway is no longer run (the pipeline's hooks).
  const hookScripts = await hookScriptFiles(settings.hooks, worktree.dir, env);
  const wantsResponse = (settings.hooks.PostToolUse ?? []).length > 0;
  const hookDigests = digestFiles(hookScripts);
  // An agent CLI's settings and guard socket: shown read-only inside, so no call can replace them.
  const agentDir = ticket.agent === 'corral' ? undefined : agentControlDir(run.runDir);
  if (agentDir !== undefined) await mkdir(agentDir, { recursive: true, mode: 0o700 });
  // The agent CLI itself runs inside, from wherever it is installed.
  const cliFolder = ticket.agent === 'corral' ? undefined : agentCliFolder(ticket.agent, settings.agentCommands[ticket.agent]?.value, options.env);
  // So does corral's own hook command, from this copy of corral.
  const cliFolders = ticket.agent === 'corral' ? [] : readableDirectories({ additionalDirectories: [...(cliFolder === undefined ? [] : [{ value: cliFolder, from: `the ${ticket.agent} CLI` }]), { value: corralPackage().dir, from: "corral's hook command" }] }, env.HOME, run.warn);
  // One sandbox for every command of the run: setup, the agent's Bash calls, checks.
  // Read/Write/Edit run in corral, under the guard.
  const sandbox = await createSandbox({
    protectedFiles: hookScripts,
    mode: ticket.sandbox,
    worktree: worktree.dir,
    tmpDir: tempDir,
    network: ticket.network,
    setupNetwork: ticket.setupNetwork,
    ...(repoCache ? { setupWritable: [repoCache.packages] } : {}),
    ...(env.HOME ? { home: env.HOME } : {}),
    ...(options.env.PATH ? { searchPath: options.env.PATH } : {}),
    readPaths: [...ticket.sandboxRead, ...readableDirectories(settings, env.HOME, run.warn), ...(agentDir === undefined ? [] : [agentDir]), ...cliFolders],
    expose: ticket.sandboxExpose,
    ...(ticket.sandboxPerCommand ? { perCommand: true } : {}),
  });
  // Ended before the temp dir and the worktree go (the stack releases in reverse).
  started(sandbox);
  // Without a sandbox, what ends a command's processes is said too, and never silently missing.
  const reaper = sandbox.containsProcesses ? undefined : await (reaperFound ?? findSubreaper());
  const sandboxWarnings = [sandbox.warning, reaper?.kind === 'none' ? `${NO_SUBREAPER_WARNING} (${reaper.reason})` : undefined].filter((w): w is string => w !== undefined);
  for (const warning of sandboxWarnings) run.warn(warning);
  emit({
    type: 'sandbox',
    kind: sandbox.kind,
    network: sandbox.network,
    ...(ticket.setup.length > 0 ? { setupNetwork: sandbox.setup.network } : {}),
    ...(reaper ? { reaper: reaper.kind } : {}),
    ...(sandbox.kind === 'bwrap' && !sandbox.supervised ? { perCommand: true as const } : {}),
    ...(sandboxWarnings.length > 0 ? { warning: sandboxWarnings.join('; ') } : {}),
  });
  // Without the network, package managers are told they are offline, so they fail at once.
  const agentEnv = buildToolEnv(options.env, envChanges, { tmpDir: tempDir, offline: !sandbox.network });
  const setupEnv = buildToolEnv(options.env, envChanges, {
    tmpDir: tempDir,
    offline: !sandbox.setup.network,
    ...(repoCache ? { packageCache: repoCache.packages } : {}),
  });
  const guard = createGuard({
    worktree: worktree.dir,
    tmpDir: tempDir,
    env: agentEnv,
    ticket,
    layers: settings.policyLayers,
    hookScripts,
    sandbox: { kind: sandbox.kind, network: sandbox.network },
    exposed: ticket.sandboxExpose,
  });
  emit({ type: 'policy', rules: guard.policy.rules.map((rule) => ({ id: rule.id, effect: rule.effect, scope: rule.scope })), defaultEffect: guard.policy.defaultEffect });
  const pipeline = createCallPipeline({
    guard,
    approver: run.approver,
    hooks: settings.hooks,
    hookSite: (signal) => ({
      sessionId: run.runId,
      transcriptPath: run.traceFile,
      cwd: worktree.dir,
      env,
      // Only what a hook names in env_from_host is taken from here.
      hostEnv: options.env,
      // Without a person to answer, every ask is refused: Claude Code's dontAsk.
      permissionMode: options.prompt ? 'default' : 'dontAsk',
      signal,
    }),
    ticketId: ticket.id,
    changedHookScript: () => {
      const digests = digestFiles(hookScripts);
      const changed = hookScripts.find((file) => digests.get(file) !== hookDigests.get(file));
      return changed === undefined ? null : path.relative(worktree.dir, changed);
    },
    onBrokenHook: (event, command, what) => run.warn(`${event} hook \`${command}\` ${what}; the run went on without it`),
    emit,
    redact: run.redact,
  });
  const workspace: Workspace = {
    worktree,
    hostBefore,
    sandbox,
    guard,
    pipeline,
    commands: { cwd: worktree.dir, env: agentEnv, outputCap: OUTPUT_CAP, sandbox },
    setupCommands: { cwd: worktree.dir, env: setupEnv, outputCap: OUTPUT_CAP, sandbox: sandbox.setup },
    repoCache,
    toolContext: (signal) => ({ worktree: worktree.dir, env: agentEnv, signal, outputCap: OUTPUT_CAP, bashTimeoutMs: 2 * 60_000, bashMaxTimeoutMs: 10 * 60_000, sandbox, wantsResponse }),
    beginAgentPhase: () => {
      // Setup is the ticket author's and sees the worktree's secrets; the agent's commands
      // and the checks (which run the agent's code) see them as empty.
      const { masked, exposed } = sandbox.maskSecrets();
      emit({ type: 'secrets_masked', masked: [...masked], exposed: [...exposed] });
      if (exposed.length > 0) run.warn(`exposed to the agent by sandbox.expose: ${exposed.join(', ')}`);
      sandbox.supervisor?.();
    },
    hostChanges: async () => hostDifferences(hostBefore, await recordHostState(ticket.repo, hostBefore)),
  };
  // Without setup, the agent's phase begins as soon as the workspace is there.
  if (ticket.setup.length === 0) workspace.beginAgentPhase();
  return workspace;
}

/** The sha256 of each file, or '' for one that cannot be read (gone, replaced by a folder). */
function digestFiles(files: string[]): Map<string, string> {
  return new Map(
    files.map((file) => {
      try {
        return [file, createHash('sha256').update(readFileSync(file)).digest('hex')];
      } catch {
        return [file, ''];
      }
    }),
  );
}

/**
 * Claude Code's additionalDirectories as folders commands may read in the sandbox
 * (writes stay in the worktree). One that holds credentials or the whole home is left
 * out with a warning, not refused: the settings file is valid for Claude Code.
 */
function readableDirectories(settings: Pick<Settings, 'additionalDirectories'>, home: string | undefined, warn: (message: string) => void): string[] {
  return settings.additionalDirectories.flatMap((entry) => {
    try {
      return checkReadPaths([entry.value], home);
    } catch (error) {
      warn(`additionalDirectories ${entry.value} (${entry.from}) is not shown to commands: ${error instanceof Error ? error.message.replace(/^sandbox: read: /, '') : String(error)}`);
      return [];
    }
  });
}
