import { describe, expect, it } from 'vitest';
import { dryRunGuard } from '../../src/run/dry-run.js';
import { textHoldsCredential } from '../../src/guard/paths/tracked-secrets.js';
import { repoWithFiles } from '../support/repo.js';
import { judgeCall } from '../../src/run/call-pipeline.js';

const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', XDG_CONFIG_HOME: '/nonexistent' };
// Built at run time, so the repository holds no token-shaped literal.
const token = ['npm', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8'].join('_');

describe('a settings file holds a credential', () => {
  it.each([
    ['//registry.npmjs.org/:_authToken=' + token, true],
    ['_auth = dXNlcjpwYXNz', true],
    ['API_KEY=sk-live-123', true],
    ['export DB_PASSWORD="hunter2"', true],
    ['DATABASE_URL=postgres://app:s3cret@db:5432/app', true],
    ['"client_secret": "abc",', true],
    ['-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----', true],
    // No credential-named key, but a token by its shape.
    [`OPENAI=${['sk', 'proj', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8S9t0U1v2W3x4'].join('-')}`, true],
    [`GITLAB=${['glpat', 'A1b2C3d4E5f6G7h8I9j0'].join('-')}`, true],
  ])('%s: yes', (text, holds) => expect(textHoldsCredential(text)).toBe(holds));

  it.each([
    'engine-strict=true\nsave-exact=true',
    '//registry.npmjs.org/:_authToken=${NPM_TOKEN}',
    'PORT=3000\nNODE_ENV=development\nLOG_LEVEL=debug',
    'API_KEY=\nSECRET=<your secret here>\nTOKEN=changeme',
    '# password=hunter2 (commented out)',
    'registry=https://registry.example.com/',
  ])('%s: no', (text) => expect(textHoldsCredential(text)).toBe(false));
});

describe('history reads in a repository that tracks a secret-named file', () => {
  const judge = async (files: Record<string, string>, command: string): Promise<string> => {
    const repo = repoWithFiles({ 'src/a.js': 'a\n', ...files }, 'corral-tracked-');
    const guard = await dryRunGuard(undefined, repo, ENV, 'none');
    const verdict = (await judgeCall(guard, 'Bash', { command })).verdict;
    return `${verdict.decision.effect} ${verdict.decision.rule}`;
  };

  it('lets git diff, show and log -p run when the tracked .npmrc holds only settings', async () => {
    for (const command of ['git log -p', 'git show', 'git diff HEAD', 'cat .npmrc', 'grep -r engine .']) {
      expect(await judge({ '.npmrc': 'engine-strict=true\n' }, command), command).toBe('allow baseline.read-only');
    }
  });

  it('refuses them when the tracked file holds a token, and a key file always', async () => {
    for (const command of ['git log -p', 'git show', 'cat .npmrc']) {
      expect(await judge({ '.npmrc': `//registry.npmjs.org/:_authToken=${token}\n` }, command), command).toBe('deny baseline.secrets');
    }
    expect(await judge({ 'deploy.pem': 'not even a key\n' }, 'git log -p')).toBe('deny baseline.secrets');
  });

  it('keeps an untracked .env a secret whatever it holds', async () => {
    const repo = repoWithFiles({ 'src/a.js': 'a\n', '.gitignore': '.env\n' }, 'corral-untracked-');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(`${repo}/.env`, 'PORT=3000\n');
    const guard = await dryRunGuard(undefined, repo, ENV, 'none');
    expect((await judgeCall(guard, 'Bash', { command: 'cat .env' })).verdict.decision.rule).toBe('baseline.secrets');
    expect((await judgeCall(guard, 'Read', { file_path: '.env' })).verdict.decision.rule).toBe('baseline.secrets');
  });
});
