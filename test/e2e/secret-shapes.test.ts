import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { base64Forms } from '../../src/text/find-secrets.js';
import { runCli, runReport } from '../support/cli.js';
import { commitFiles, gitIn, makeDemoRepo } from '../support/repo.js';

// Tokens are made from parts at run time, so the repository holds no token-shaped literal.
const GITLAB_TOKEN = ['gl', 'pat-', 'Zq7vK2mX9pL4rT8wY1nB'].join('');
const DEPLOY_TOKEN = ['dep', 'loy-', 'Xw4Jp9Lm2Qr7Tz5Kb8Vn3Hc6'].join('');

/** The replay script's line for a Write of `content` (JSON is YAML too). */
const write = (file: string, content: string) => `      - Write: {file_path: ${file}, content: ${JSON.stringify(content)}}`;

describe('secrets by shape and by encoded value, through the real CLI', () => {
  it('a change that adds a GitLab token or a base64 of an environment secret fails the fence, redacted and not committed', async () => {
    const repo = makeDemoRepo();
    // What `env | base64` prints: the whole environment, wrapped at 76 columns.
    const environment = `HOME=/home/dev\nLANG=C.UTF-8\nDEPLOY_TOKEN=${DEPLOY_TOKEN}\nPATH=/usr/local/bin:/usr/bin:/bin\n`;
    const dump = Buffer.from(environment).toString('base64').match(/.{1,76}/g)!.join('\n');
    commitFiles(repo, {
      'fixtures/replay/shapes.yaml': ['turns:', '  - tools:', write('fixtures/example-project/deploy.txt', `registry_token = "${GITLAB_TOKEN}"\n`), write('fixtures/example-project/env.b64', `${dump}\n`), '  - text: done', ''].join('\n'),
      'fixtures/tickets/shapes.yaml': 'task: t\nallow: ["fixtures/**"]\nsandbox: none\nmodel: replay:../replay/shapes.yaml\n',
    });
    const run = await runCli(['run', 'fixtures/tickets/shapes.yaml', '--json'], { cwd: repo, env: { DEPLOY_TOKEN } });
    expect(run.exitCode).toBe(2);
    const report = runReport(run.stdout);
    expect(report.status).toBe('fence_violated');
    expect(report.reason).toContain('a secret shaped like gitlab-pat');
    expect(report.reason).toContain('the value of DEPLOY_TOKEN as base64');
    const patch = readFileSync(report.patch, 'utf8');
    expect(patch).toContain('+registry_token = "[REDACTED gitlab-pat]"');
    expect(patch).toContain('[REDACTED DEPLOY_TOKEN as base64]');
    expect(report.branch).toBeNull();
    expect(gitIn(repo, ['branch', '--list', 'corral/*']).trim()).toBe('');
    const encoded = base64Forms(Buffer.from(DEPLOY_TOKEN));
    // The patch, the trace (JSON lines: a line break is `\n` there) and the output hold neither.
    const unwrap = (text: string) => text.replace(/\n\+?|\\n/g, '');
    for (const text of [patch, readFileSync(report.trace, 'utf8'), run.stdout + run.stderr]) {
      expect(text).not.toContain(GITLAB_TOKEN);
      expect(text).not.toContain(DEPLOY_TOKEN);
      for (const form of encoded) expect(unwrap(text)).not.toContain(form);
    }
    // The dump is cut only where the secret was: the rest of the environment is still there.
    expect(patch).toContain(`+${dump.slice(0, 20)}`);
  });

  it('a change next to a token the repository already holds passes: only added lines count', async () => {
    const repo = makeDemoRepo();
    commitFiles(repo, { 'fixtures/example-project/settings.txt': `name = demo\nregistry_token = "${GITLAB_TOKEN}"\nport = 80\n` });
    commitFiles(repo, {
      'fixtures/replay/next-to.yaml': ['turns:', '  - tools:', '      - Edit: {file_path: fixtures/example-project/settings.txt, old_string: port = 80, new_string: port = 8080}', '  - text: done', ''].join('\n'),
      'fixtures/tickets/next-to.yaml': 'task: t\nallow: ["fixtures/**"]\nsandbox: none\nmodel: replay:../replay/next-to.yaml\n',
    });
    const run = await runCli(['run', 'fixtures/tickets/next-to.yaml', '--json'], { cwd: repo });
    expect(run.exitCode).toBe(0);
    const report = runReport(run.stdout);
    expect(report.branch).toBeTypeOf('string');
    expect(readFileSync(report.patch, 'utf8')).toContain('+port = 8080');
  });
});
