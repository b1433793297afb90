import path from 'node:path';
import type { SecretValue } from '../text/redact.js';
import { decideStatus, type Outcome, type RunStatus } from '../trace/outcome.js';
import { listChanges, listSubmoduleWrites, snapshotWorktree } from '../workspace/changes.js';
import { checkFence, fenceWithSubmoduleWrites } from '../workspace/fence.js';
import { resultBranchTip } from '../workspace/host-integrity.js';
import { commitSnapshot, commitToBranch } from '../workspace/keep.js';
import { writePatch } from '../workspace/patch-file.js';
import type { Run } from './prepare.js';
import type { RunWorkspace } from './workspace-stage.js';

/** The run judged: its status, and what of its work was kept where (the fence and host verdicts are events). */
export interface Judgement {
  status: RunStatus;
  reason: string;
  patch?: string;
  branch?: string;
}

/**
 * Keeps the agent's work whatever happened: reads the fence, writes the patch (with any
 * secret value redacted), and commits a passed run to its branch. A workspace that was
 * never made has nothing to judge: the outcome alone decides.
 */
export async function judgeRun(run: Run, pending: RunWorkspace, outcome: Outcome): Promise<Judgement> {
  const workspace = await pending.ready.catch(() => undefined);
  if (workspace === undefined) return decideStatus(outcome, { ok: true, verdicts: [] }, run.ticket);
  // The agent and its checks are done, so nothing runs in the sandbox again: its supervisor
  // ends (and with it anything a command left behind) while git reads the worktree, not
  // after the result is committed. The workspace's release waits for it all the same.
  void workspace.sandbox.close();
  const { ticket, runId } = run;
  let patch: string | undefined;
  try {
    // The host's state is read beside the snapshot: one is the host repository, the other
    // the worktree, and the agent is done with both.
    const hostChanged = workspace.hostChanges();
    hostChanged.catch(() => undefined);
    const snapshot = await snapshotWorktree(workspace.worktree);
    // The result's commit is made while the fence is read and the patch written, not after:
    // a branch is pointed at it only once the run has passed.
    const message = `corral: ${ticket.title ?? ticket.id}\n\nTicket: ${ticket.id}\nRun: ${runId}\n`;
    const commit = commitSnapshot(snapshot, message);
    commit.catch(() => undefined);
    try {
      const changes = await listChanges(snapshot);
      // Writes inside a submodule's path are in no patch or commit: judged and named, never silently dropped.
      const submoduleWrites = await listSubmoduleWrites(snapshot, changes);
      const fence = fenceWithSubmoduleWrites(checkFence(changes, ticket.allow, ticket.forbid), submoduleWrites, ticket.allow, ticket.forbid);
      if (submoduleWrites.length > 0) {
        const folders = [...new Set(submoduleWrites.map((write) => write.submodule))].join(', ');
        pending.keep(`${submoduleWrites.length} file(s) written inside submodule ${folders} are in neither the patch nor any commit (a worktree does not check submodules out)`);
      }
      run.emit({ type: 'fence', ok: fence.ok, verdicts: fence.verdicts });
      // No change against the base is an empty patch: no git process needed to say so.
      // Streamed from git to the file and read for secrets a window at a time.
      const source = { cwd: snapshot.worktree.dir, env: snapshot.env, baseCommit: snapshot.worktree.baseCommit };
      const written = await writePatch(source, path.join(run.runDir, 'patch.diff'), run.secrets, { empty: changes.length === 0 });
      const leaked = written.secretsAdded.length > 0 ? { added: written.secretsAdded } : undefined;
      patch = written.file;
      const hostChanges = await hostChanged;
      run.emit({ type: 'host', ok: hostChanges.length === 0, differences: hostChanges });
      const kept = { patch };
      if (leaked) {
        return { status: 'fence_violated', reason: `the change contains ${describeSecrets(leaked.added, run.secrets)}; it was redacted in the patch and not committed`, ...kept };
      }
      // With bubblewrap the agent's commands never see the host's .git or checkout (and its
      // file tools are held to the worktree), so a host change is someone else's doing.
      let verdict = decideStatus(outcome, fence, ticket, hostChanges, { hostSealed: workspace.sandbox.kind === 'bwrap' });
      // A Ctrl-C while the result was being recorded still means interrupted: no branch.
      if (verdict.status === 'passed' && run.options.interrupt.aborted) verdict = { status: 'interrupted', reason: 'interrupted' };
      if (verdict.status !== 'passed') return { ...verdict, ...kept };
      // The patch is written and the fence read: the worktree goes while the result is
      // committed (in the host repository, from the snapshot's own index).
      pending.release();
      const { branch, detour } = await commitToBranch(snapshot, `corral/${ticket.id}`, message, runId.slice(ticket.id.length + 1), { commit, ticketId: ticket.id, tipAtStart: resultBranchTip(workspace.hostBefore, `corral/${ticket.id}`) });
      if (detour !== undefined) run.warn(detour);
      return { ...verdict, ...kept, branch };
    } finally {
      // git reads the snapshot's index until the commit is written.
      await commit.catch(() => undefined);
      await snapshot.dispose();
    }
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    if (patch === undefined) pending.keep();
    // An interruption stays an interruption even if recording then failed.
    const status: RunStatus = outcome?.kind === 'interrupted' ? 'interrupted' : 'internal_error';
    return { status, reason: `could not record the result: ${detail}`, ...(patch ? { patch } : {}) };
  }
}

/** "the value of NAME, the value of NAME as base64, a secret shaped like gitlab-pat". */
function describeSecrets(found: string[], secrets: SecretValue[]): string {
  const names = new Set(secrets.map(({ name }) => name));
  return found.map((rule) => (names.has(rule.split(' ')[0]!) ? `the value of ${rule}` : `a secret shaped like ${rule}`)).join(', ');
}
