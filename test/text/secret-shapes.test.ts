import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { base64Forms, createSecretFinder, findSecretShapes } from '../../src/text/find-secrets.js';
import { createRedactor, findAddedSecrets, redactSecrets, redactValue } from '../../src/text/redact.js';
import { PROJECT_ROOT } from '../support/cli.js';

// Every token here is made at run time from parts, so this file holds nothing that a secret
// scanner (or corral's own no-false-positive test below) would flag.
const join = (...parts: string[]) => parts.join('');
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `length` characters of `alphabet` that look random (a fixed seed: the same every run). */
function noise(length: number, alphabet = ALNUM, seed = length * 7919 + alphabet.length): string {
  let state = seed >>> 0;
  let out = '';
  for (let i = 0; i < length; i++) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    out += alphabet[(state >>> 8) % alphabet.length];
  }
  return out;
}

function pem(kind: string, body = noise(64 * 4, `${ALNUM}+/`)): string {
  const lines = body.match(/.{1,64}/g)!.join('\n');
  return join('-----BEGIN ', kind, 'PRIVATE KEY-----\n', lines, '\n-----END ', kind, 'PRIVATE KEY-----');
}

function jwt(): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return [part({ alg: 'HS256', typ: 'JWT' }), part({ sub: '1234567890', name: 'Jane Doe', iat: 1516239022 }), noise(43, `${ALNUM}-_`)].join('.');
}

/** One realistic sample of each shape, and the rule that must name it. */
const SAMPLES: Array<[string, string, string]> = [
  ['GitHub fine-grained PAT', 'github-fine-grained-pat', join('github', '_pat_', '11A', noise(19), '_', noise(59))],
  ['GitHub classic PAT', 'github-pat', join('gh', 'p_', noise(36))],
  ['GitHub OAuth token', 'github-oauth', join('gh', 'o_', noise(36, ALNUM, 1))],
  ['GitHub user-to-server token', 'github-app-token', join('gh', 'u_', noise(36, ALNUM, 2))],
  ['GitHub server-to-server token', 'github-app-token', join('gh', 's_', noise(36, ALNUM, 3))],
  ['GitHub refresh token', 'github-refresh-token', join('gh', 'r_', noise(36, ALNUM, 4))],
  ['GitLab PAT', 'gitlab-pat', join('gl', 'pat-', noise(20, `${ALNUM}_-`))],
  ['GitLab routable PAT', 'gitlab-pat-routable', join('gl', 'pat-', noise(38, `${ALNUM}_-`), '.01', noise(7, 'abcdefghijklmnopqrstuvwxyz0123456789'))],
  ['GitLab runner token', 'gitlab-runner-authentication-token', join('gl', 'rt-', noise(20, ALNUM, 9))],
  ['Stripe live secret key', 'stripe-access-token', join('sk', '_live_', noise(24))],
  ['Stripe restricted key', 'stripe-access-token', join('rk', '_live_', noise(24, ALNUM, 5))],
  ['Google API key', 'gcp-api-key', join('AI', 'za', 'Sy', noise(33, `${ALNUM}_-`))],
  ['npm token', 'npm-access-token', join('np', 'm_', noise(36))],
  ['JWT', 'jwt', jwt()],
  ['Hugging Face token', 'huggingface-access-token', join('h', 'f_', noise(34, LETTERS))],
  ['AWS access key id', 'aws-access-token', join('AK', 'IA', noise(16, BASE32))],
  ['AWS temporary access key id', 'aws-access-token', join('AS', 'IA', noise(16, BASE32, 6))],
  ['Slack bot token', 'slack-bot-token', join('xo', 'xb-', '1234567890123-', '1234567890123-', noise(24))],
  ['Slack user token', 'slack-user-token', join('xo', 'xp-', '1234567890-1234567890-1234567890-', noise(32, HEX))],
  ['Slack webhook', 'slack-webhook-url', join('https://hooks.', 'slack.com/services/', 'T0', noise(9, BASE32), '/B0', noise(9, BASE32), '/', noise(24))],
  ['OpenAI project key', 'openai-api-key', join('sk', '-proj-', noise(74, `${ALNUM}_-`), 'T3Blbk', 'FJ', noise(74, `${ALNUM}_-`, 7))],
  ['OpenAI legacy key', 'openai-api-key', join('sk', '-', noise(20), 'T3Blbk', 'FJ', noise(20, ALNUM, 8))],
  ['Anthropic API key', 'anthropic-api-key', join('sk', '-ant-', 'api03-', noise(93, `${ALNUM}_-`), 'AA')],
  ['Anthropic admin key', 'anthropic-admin-api-key', join('sk', '-ant-', 'admin01-', noise(93, `${ALNUM}_-`, 9), 'AA')],
  ['Azure AD client secret', 'azure-ad-client-secret', join('abc', '8Q', '~', noise(34, `${ALNUM}_~.-`))],
  ['Twilio API key', 'twilio-api-key', join('S', 'K', noise(32, HEX))],
  ['SendGrid API key', 'sendgrid-api-token', join('S', 'G.', noise(22, `${ALNUM}_-`), '.', noise(43, `${ALNUM}_-`))],
  ['RSA private key', 'private-key', pem('RSA ')],
  ['EC private key', 'private-key', pem('EC ')],
  ['DSA private key', 'private-key', pem('DSA ')],
  ['PKCS#8 private key', 'private-key', pem('')],
  ['encrypted PKCS#8 private key', 'private-key', pem('ENCRYPTED ')],
  ['OpenSSH private key', 'private-key', pem('OPENSSH ', join('b3BlbnNz', 'aC1rZXktdjE', noise(240, `${ALNUM}+/`)))],
  ['PGP private key block', 'private-key', join('-----BEGIN PGP ', 'PRIVATE KEY BLOCK-----\n\n', noise(64 * 3, `${ALNUM}+/`).match(/.{1,64}/g)!.join('\n'), '\n-----END PGP ', 'PRIVATE KEY BLOCK-----')],
];

describe('secret shapes', () => {
  it.each(SAMPLES)('finds and redacts a %s', (_name, rule, token) => {
    const text = `const config = {\n  token: "${token}",\n};\n`;
    const findings = findSecretShapes(text);
    expect(findings).toEqual([{ rule, start: text.indexOf(token), end: text.indexOf(token) + token.length }]);
    const redacted = redactSecrets(text);
    expect(redacted).toBe(`const config = {\n  token: "[REDACTED ${rule}]",\n};\n`);
  });

  it('finds a token as a JSON string holds it (a trace line), and keeps the JSON valid', () => {
    for (const [, rule, token] of SAMPLES) {
      const line = JSON.stringify({ type: 'tool_result', output: `wrote ${token}\n`, note: 'a "quoted" \\ word' });
      const redacted = redactSecrets(line);
      expect(redacted, rule).not.toContain(token.slice(12, 30));
      expect(JSON.parse(redacted).output, rule).toBe(`wrote [REDACTED ${rule}]\n`);
    }
  });

  it('finds a private key that is cut short, and one whose body follows a header line', () => {
    const cut = pem('RSA ').slice(0, 200);
    expect(redactSecrets(`output: ${cut}`)).toBe('output: [REDACTED private-key]');
    const encrypted = join('-----BEGIN RSA ', 'PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,', noise(32, HEX), '\n\n', noise(64, `${ALNUM}+/`), '\n', noise(64, `${ALNUM}+/`, 3), '\n-----END RSA ', 'PRIVATE KEY-----');
    expect(redactSecrets(encrypted)).toBe('[REDACTED private-key]');
  });

  it('finds the password of a URL, and only the password', () => {
    const password = join('hunter', '2-', noise(10));
    expect(redactSecrets(`git clone https://deploy:${password}@git.example.com/team/app.git`)).toBe('git clone https://deploy:[REDACTED url-password]@git.example.com/team/app.git');
    expect(redactSecrets(`DATABASE_URL=postgres://app:${password}@db:5432/app`)).toBe('DATABASE_URL=postgres://app:[REDACTED url-password]@db:5432/app');
    // A template, a placeholder, or no password at all is no secret.
    for (const text of ['https://x-access-token:${token}@github.com/o/r', 'https://user:password@example.com', 'ssh://git@github.com/o/r', 'postgres://postgres:postgres@localhost/db', 'http://localhost:8080/path']) {
      expect(findSecretShapes(text), text).toEqual([]);
    }
  });

  it('leaves placeholders and look-alikes alone', () => {
    const texts = [
      join('AK', 'IA', 'IOSFODNN7', 'EXAMPLE'),
      join('sk', '_live_', 'x'.repeat(24)),
      join('np', 'm_', 'a'.repeat(36)),
      `const ${join('h', 'f_')}model = load('bert');`,
      'eyJhbGciOiJIUzI1NiJ9 is only a header',
    ];
    for (const text of texts) expect(findSecretShapes(text), text).toEqual([]);
  });

  it('hides the whole token when a fixed-length shape is the start of a longer one', () => {
    const token = join('gl', 'pat-', noise(26, `${ALNUM}`));
    expect(redactSecrets(`${token} rest`)).toBe('[REDACTED gitlab-pat] rest');
  });
});

describe('secret values, as they are and encoded', () => {
  const value = join('s3cr3t-', noise(24, `${ALNUM}+/`), '-value');
  const secrets = [{ name: 'DEPLOY_TOKEN', value }];
  const redact = createRedactor(secrets);

  it('keeps redacting the value itself by the variable name', () => {
    expect(redact(`echo ${value} done`)).toBe('echo [REDACTED DEPLOY_TOKEN] done');
    expect(redact(JSON.stringify({ url: `https://h/?t=${encodeURIComponent(value)}` }))).not.toContain(encodeURIComponent(value));
  });

  it('finds the value in a base64 of a whole environment, at each of the three byte offsets, wrapped or not', () => {
    for (const prefix of ['', 'A=1\n', 'AB=1\n', 'ABC=1\n']) {
      const env = `HOME=/home/dev\n${prefix}DEPLOY_TOKEN=${value}\nPATH=/usr/bin:/bin\n`;
      const flat = Buffer.from(env).toString('base64');
      const wrapped = flat.match(/.{1,76}/g)!.join('\n');
      for (const text of [flat, wrapped, Buffer.from(env).toString('base64url'), JSON.stringify({ output: wrapped })]) {
        const redacted = redact(text);
        expect(redacted).toContain('[REDACTED DEPLOY_TOKEN as base64]');
        for (const form of base64Forms(Buffer.from(value))) expect(redacted.replace(/\n|\\n/g, '')).not.toContain(form);
      }
    }
  });

  it('finds the value as hex, lower or upper case, wrapped as xxd -p wraps it', () => {
    const hex = Buffer.from(`DEPLOY_TOKEN=${value}\n`).toString('hex');
    const wrapped = hex.match(/.{1,60}/g)!.join('\n');
    for (const text of [wrapped, hex.toUpperCase()]) {
      const redacted = redact(text);
      expect(redacted).toContain('[REDACTED DEPLOY_TOKEN as hex]');
      expect(redacted.replace(/\n/g, '').toLowerCase()).not.toContain(Buffer.from(value).toString('hex'));
    }
  });

  it('reports where each finding is, named by the variable before any shape', () => {
    const find = createSecretFinder([{ name: 'GITLAB_TOKEN', value: join('gl', 'pat-', noise(20)) }]);
    const text = `token=${join('gl', 'pat-', noise(20))} and ${Buffer.from(join('gl', 'pat-', noise(20))).toString('base64')}`;
    expect(find(text).map((finding) => finding.rule)).toEqual(['GITLAB_TOKEN', 'GITLAB_TOKEN as base64']);
  });

  it('redacts every string inside a value, leaving valid JSON', () => {
    const approval = { command: `curl -H "Authorization: Bearer ${join('gh', 'p_', noise(36))}" https://api`, note: 'a\\"b' };
    expect(redactValue(approval)).toEqual({ command: 'curl -H "Authorization: Bearer [REDACTED github-pat]" https://api', note: 'a\\"b' });
  });
});

describe('secrets a change adds', () => {
  const token = join('gl', 'pat-', noise(20, `${ALNUM}_-`));
  const value = join('v4lue-', noise(30));
  const secrets = [{ name: 'SERVICE_API_KEY', value }];
  const patch = (lines: string[]) => Buffer.from(['diff --git a/app.env b/app.env', 'index 1111111..2222222 100644', '--- a/app.env', '+++ b/app.env', `@@ -1,3 +1,${lines.length} @@`, ...lines, ''].join('\n'));

  it('finds a token on an added line and redacts it in the patch', () => {
    const found = findAddedSecrets(patch([' NAME=app', `+TOKEN=${token}`, ' PORT=80']), secrets)!;
    expect(found.added).toEqual(['gitlab-pat']);
    expect(found.redacted.toString()).toContain('+TOKEN=[REDACTED gitlab-pat]\n');
    expect(found.redacted.toString()).not.toContain(token);
  });

  it('ignores what the change removes or leaves as context', () => {
    expect(findAddedSecrets(patch([`-TOKEN=${token}`, ' NAME=app', `-KEY=${value}`, '+TOKEN=', ` OLD=${token}`]), secrets)).toBeUndefined();
  });

  it('finds an encoded value spread over added lines, and a private key', () => {
    const encoded = Buffer.from(`HOME=/h\nSERVICE_API_KEY=${value}\nPATH=/bin\n`).toString('base64').match(/.{1,76}/g)!;
    const found = findAddedSecrets(patch([' NAME=app', ...encoded.map((line) => `+${line}`), ...pem('OPENSSH ').split('\n').map((line) => `+${line}`)]), secrets)!;
    expect(found.added).toEqual(['SERVICE_API_KEY as base64', 'private-key']);
    expect(found.redacted.toString()).toContain('[REDACTED SERVICE_API_KEY as base64]');
    expect(found.redacted.toString()).not.toContain('PRIVATE KEY-----\n+');
  });

  it('finds a value whose bytes are not ASCII', () => {
    const found = findAddedSecrets(patch([`+name=${join('pässwörd-', noise(12))}`]), [{ name: 'DB_PASSWORD', value: join('pässwörd-', noise(12)) }])!;
    expect(found.added).toEqual(['DB_PASSWORD']);
    expect(found.redacted.toString('utf8')).toBe(patch(['+name=[REDACTED DB_PASSWORD]']).toString('utf8'));
  });

  it('does not read a hunk line that starts like a header as one', () => {
    const found = findAddedSecrets(patch([`+++ ${token}`]), secrets)!;
    expect(found.added).toEqual(['gitlab-pat']);
  });
});

describe('no false positives on ordinary code', () => {
  it("finds nothing in this repository's own source, tests and lock file but tests' declared fakes", () => {
    const files = execFileSync('git', ['ls-files', '-z', 'src', 'test', 'docs', 'bench', 'scripts', 'package-lock.json', 'package.json', 'README.md'], { cwd: PROJECT_ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(path.join(PROJECT_ROOT, file), 'utf8');
      } catch {
        continue; // a file the work tree no longer has
      }
      for (const finding of findSecretShapes(text)) {
        const secret = text.slice(finding.start, finding.end);
        // A test's or a benchmark's fixture credential says it is one in its own text, or is
        // too short to be a real one (a URL password `p` or `pw`).
        if (/^(?:test|bench)\//.test(file) && (/fake|test|not-a-real|corpus|password|token/i.test(secret) || secret.length < 8)) continue;
        found.push(`${file}: ${finding.rule}: ${secret}`);
      }
    }
    expect(found).toEqual([]);
  });
});
