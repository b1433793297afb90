// The shapes of well-known credentials, as data: what the redactor and the fence's secret
// check look for besides the values of corral's own secret-named variables.
//
// Source: gitleaks' default rules (config/gitleaks.toml, v8.30.0, MIT licence,
// Copyright (c) 2019 Zachary Rice), one entry per gitleaks rule, under gitleaks' own rule id,
// with its regex, its entropy floor and its allowlist. Two kinds of change, both so the
// rules run as JavaScript on Node 20: Go's inline `(?i)` becomes the `i` flag or a spelled-
// out class, and gitleaks' trailing delimiter group becomes a lookahead (`END`) so that the
// match is the secret itself; the delimiter set gains `\`, `,`, `)`, `]`, `}`, `<`, `>`,
// since corral scans JSON (a trace line, an approval) as well as source.
// Entries whose source is `corral` are corral's own: the looser shapes it matched before this
// table (a shortened or test-format key is still redacted) and a password in a URL (after
// secretlint's basicauth rule, widened to every scheme and to any password characters).
//
// Why data and not a secret-scanning package: secretlint's recommended preset (the only
// maintained rule set on npm) needs Node 22 from v12, lints asynchronously and slowly (the
// redactor is a synchronous function run on every trace line), and has no rule for
// GitLab, Stripe, Google API keys, JWTs, Hugging Face or Twilio; no npm package ships gitleaks'
// rules as data.

export interface SecretShape {
  /** gitleaks' rule id (or corral's own name); a redaction reads `[REDACTED <rule>]`. */
  rule: string;
  /** Global. The match is the secret, or (with the `d` flag) its named group `secret` is. */
  pattern: RegExp;
  /**
   * What must come right before a match (tested on the text before it, with the text's start
   * read as a space), with the secret starting at its group `lead` if it has one. A regex
   * that starts with a lookbehind loses V8's fast scan for its first literal; this keeps it.
   */
  before?: RegExp;
  /** Every match holds one of these (as written): a rule whose keywords are absent is skipped. */
  keywords: readonly string[];
  /** Shannon entropy (bits a character) below which a match is a placeholder, not a secret. */
  entropy?: number;
  /** A secret that matches this is a published example or placeholder. */
  allow?: RegExp;
  source: 'gitleaks' | 'corral';
}

/** gitleaks' `(?:[\x60'"\s;]|\\[nr]|$)`, as a lookahead, with JSON's delimiters added. */
const END = String.raw`(?=[\x60'"\s;\\,)\]}<>]|$)`;

function gitleaks(rule: string, keywords: readonly string[], source: string, options: { flags?: string; entropy?: number; allow?: RegExp } = {}): SecretShape {
  return { rule, keywords, pattern: new RegExp(source, `g${options.flags ?? ''}`), source: 'gitleaks', ...(options.entropy !== undefined ? { entropy: options.entropy } : {}), ...(options.allow ? { allow: options.allow } : {}) };
}

export const SECRET_SHAPES: readonly SecretShape[] = [
  // GitHub
  gitleaks('github-pat', ['ghp_'], String.raw`ghp_[0-9a-zA-Z]{36}`, { entropy: 3 }),
  gitleaks('github-oauth', ['gho_'], String.raw`gho_[0-9a-zA-Z]{36}`, { entropy: 3 }),
  gitleaks('github-app-token', ['ghu_', 'ghs_'], String.raw`(?:ghu|ghs)_[0-9a-zA-Z]{36}`, { entropy: 3 }),
  gitleaks('github-refresh-token', ['ghr_'], String.raw`ghr_[0-9a-zA-Z]{36}`, { entropy: 3 }),
  gitleaks('github-fine-grained-pat', ['github_pat_'], String.raw`github_pat_\w{82}`, { entropy: 3 }),
  // GitLab
  gitleaks('gitlab-pat-routable', ['glpat-'], String.raw`\bglpat-[0-9a-zA-Z_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b`, { entropy: 4 }),
  gitleaks('gitlab-pat', ['glpat-'], String.raw`glpat-[\w-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-ptt', ['glptt-'], String.raw`glptt-[0-9a-f]{40}`, { entropy: 3 }),
  gitleaks('gitlab-rrt', ['GR1348941'], String.raw`GR1348941[\w-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-runner-authentication-token-routable', ['glrt-'], String.raw`\bglrt-t\d_[0-9a-zA-Z_-]{27,300}\.[0-9a-z]{2}[0-9a-z]{7}\b`, { entropy: 4 }),
  gitleaks('gitlab-runner-authentication-token', ['glrt-'], String.raw`glrt-[0-9a-zA-Z_-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-cicd-job-token', ['glcbt-'], String.raw`glcbt-[0-9a-zA-Z]{1,5}_[0-9a-zA-Z_-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-deploy-token', ['gldt-'], String.raw`gldt-[0-9a-zA-Z_-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-feature-flag-client-token', ['glffct-'], String.raw`glffct-[0-9a-zA-Z_-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-feed-token', ['glft-'], String.raw`glft-[0-9a-zA-Z_-]{20}`, { entropy: 3 }),
  gitleaks('gitlab-incoming-mail-token', ['glimt-'], String.raw`glimt-[0-9a-zA-Z_-]{25}`, { entropy: 3 }),
  gitleaks('gitlab-kubernetes-agent-token', ['glagent-'], String.raw`glagent-[0-9a-zA-Z_-]{50}`, { entropy: 3 }),
  gitleaks('gitlab-oauth-app-secret', ['gloas-'], String.raw`gloas-[0-9a-zA-Z_-]{64}`, { entropy: 3 }),
  gitleaks('gitlab-scim-token', ['glsoat-'], String.raw`glsoat-[0-9a-zA-Z_-]{20}`, { entropy: 3 }),
  // Cloud providers
  gitleaks('aws-access-token', ['A3T', 'AKIA', 'ASIA', 'ABIA', 'ACCA'], String.raw`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b`, { entropy: 3, allow: /EXAMPLE$/ }),
  gitleaks('gcp-api-key', ['AIza'], String.raw`\bAIza[\w-]{35}${END}`, { entropy: 4 }),
  // gitleaks' regex starts four characters before the literal `Q~`: those are `before`.
  { ...gitleaks('azure-ad-client-secret', ['Q~'], String.raw`Q~[a-zA-Z0-9_~.-]{31,34}(?=$|[\\'"\x60\s<),])`, { entropy: 3 }), before: /[\\'"\x60\s>=:(,)](?<lead>[a-zA-Z0-9_~.]{3}\d)$/d },
  gitleaks('digitalocean-access-token', ['doo_v1_'], String.raw`\bdoo_v1_[a-f0-9]{64}${END}`, { entropy: 3 }),
  gitleaks('digitalocean-pat', ['dop_v1_'], String.raw`\bdop_v1_[a-f0-9]{64}${END}`, { entropy: 3 }),
  gitleaks('heroku-api-key-v2', ['HRKU-AA'], String.raw`\bHRKU-AA[0-9a-zA-Z_-]{58}${END}`, { entropy: 4 }),
  gitleaks('databricks-api-token', ['dapi'], String.raw`\bdapi[a-f0-9]{32}(?:-\d)?${END}`, { entropy: 3 }),
  // Model providers
  gitleaks('anthropic-api-key', ['sk-ant-api03-'], String.raw`\bsk-ant-api03-[a-zA-Z0-9_-]{93}AA${END}`),
  gitleaks('anthropic-admin-api-key', ['sk-ant-admin01-'], String.raw`\bsk-ant-admin01-[a-zA-Z0-9_-]{93}AA${END}`),
  gitleaks('openai-api-key', ['T3BlbkFJ'], String.raw`\b(?:sk-(?:proj|svcacct|admin)-(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})T3BlbkFJ(?:[A-Za-z0-9_-]{74}|[A-Za-z0-9_-]{58})\b|sk-[a-zA-Z0-9]{20}T3BlbkFJ[a-zA-Z0-9]{20})${END}`, { entropy: 3 }),
  gitleaks('huggingface-access-token', ['hf_'], String.raw`\bhf_[a-zA-Z]{34}${END}`, { entropy: 2 }),
  gitleaks('huggingface-organization-api-token', ['api_org_'], String.raw`\bapi_org_[a-zA-Z]{34}${END}`, { entropy: 2 }),
  // Payments, messaging, package registries, other services
  gitleaks('stripe-access-token', ['sk_', 'rk_'], String.raw`\b(?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99}${END}`, { entropy: 2 }),
  gitleaks('twilio-api-key', ['SK'], String.raw`SK[0-9a-fA-F]{32}`, { entropy: 3 }),
  gitleaks('sendgrid-api-token', ['SG.'], String.raw`\bSG\.[a-zA-Z0-9=_.-]{66}${END}`, { entropy: 2 }),
  gitleaks('slack-bot-token', ['xoxb-'], String.raw`xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*`, { entropy: 3 }),
  gitleaks('slack-user-token', ['xoxp-', 'xoxe-'], String.raw`xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}`, { entropy: 2 }),
  gitleaks('slack-app-token', ['xapp-', 'XAPP-'], String.raw`xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+`, { flags: 'i', entropy: 2 }),
  gitleaks('slack-config-access-token', ['xoxe', 'XOXE'], String.raw`xoxe.xox[bp]-\d-[A-Z0-9]{163,166}`, { flags: 'i', entropy: 2 }),
  gitleaks('slack-config-refresh-token', ['xoxe-', 'XOXE-'], String.raw`xoxe-\d-[A-Z0-9]{146}`, { flags: 'i', entropy: 2 }),
  gitleaks('slack-legacy-bot-token', ['xoxb-'], String.raw`xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}`, { entropy: 2 }),
  gitleaks('slack-legacy-token', ['xoxo-', 'xoxs-'], String.raw`xox[os]-\d+-\d+-\d+-[a-fA-F\d]+`, { entropy: 2 }),
  gitleaks('slack-legacy-workspace-token', ['xoxa-', 'xoxr-'], String.raw`xox[ar]-(?:\d-)?[0-9a-zA-Z]{8,48}`, { entropy: 2 }),
  gitleaks('slack-webhook-url', ['hooks.slack.com'], String.raw`(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`),
  gitleaks('npm-access-token', ['npm_', 'NPM_'], String.raw`\bnpm_[a-z0-9]{36}${END}`, { flags: 'i', entropy: 2 }),
  gitleaks('pypi-upload-token', ['pypi-AgEIcHlwaS5vcmc'], String.raw`pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}`, { entropy: 3 }),
  gitleaks('shopify-access-token', ['shpat_'], String.raw`shpat_[a-fA-F0-9]{32}`, { entropy: 2 }),
  gitleaks('linear-api-key', ['lin_api_'], String.raw`lin_api_[a-zA-Z0-9]{40}`, { entropy: 2 }),
  gitleaks('doppler-api-token', ['dp.pt.'], String.raw`dp\.pt\.[a-zA-Z0-9]{43}`, { entropy: 2 }),
  gitleaks('postman-api-token', ['PMAK-'], String.raw`\bPMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}${END}`, { entropy: 3 }),
  gitleaks('1password-service-account-token', ['ops_eyJ'], String.raw`ops_eyJ[a-zA-Z0-9+/]{250,}={0,3}`, { entropy: 4 }),
  gitleaks('age-secret-key', ['AGE-SECRET-KEY-1'], String.raw`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`),
  // Keys and tokens of any issuer
  // gitleaks' `[a-zA-Z0-9\/\\_-]` lets JSON's `\/` in; here only as that escape, so a JWT
  // before a JSON `\n` ends where the JWT does.
  gitleaks('jwt', ['.ey'], String.raw`\bey[a-zA-Z0-9]{17,}\.ey(?:[a-zA-Z0-9/_-]|\\/){17,}\.(?:(?:[a-zA-Z0-9/_-]|\\/){10,}={0,2})?${END}`, { entropy: 3 }),
  // Every PEM and OpenSSH kind: RSA, DSA, EC, OPENSSH, ENCRYPTED, PKCS#8, PGP … BLOCK.
  gitleaks('private-key', ['-----BEGIN', '-----begin'], String.raw`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`, { flags: 'i' }),
  // A key cut short (a truncated tool output, a partial write) still shows its body.
  { rule: 'private-key', keywords: ['-----BEGIN', '-----begin'], pattern: /-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[A-Za-z0-9+/=\r\n]|\\[nr]){64,}/gi, source: 'corral' },
  // corral's shapes from before this table, looser than gitleaks' (any length past a floor).
  { rule: 'anthropic-api-key', keywords: ['sk-ant-'], pattern: /sk-ant-[A-Za-z0-9_-]{12,}/g, source: 'corral' },
  { rule: 'openai-api-key', keywords: ['sk-'], pattern: /\bsk-[A-Za-z0-9_-]{20,}/g, source: 'corral' },
  { rule: 'github-token', keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], pattern: /\bgh[pousr]_[A-Za-z0-9]{20,}/g, source: 'corral' },
  { rule: 'aws-access-token', keywords: ['AKIA'], pattern: /\bAKIA[0-9A-Z]{16}\b/g, allow: /EXAMPLE$/, source: 'corral' },
  { rule: 'slack-token', keywords: ['xox'], pattern: /\bxox[abpors]-[A-Za-z0-9-]{10,}/g, source: 'corral' },
  // A password in a URL (https://user:pass@host, postgres://…, ftp://…): the password only.
  {
    rule: 'url-password',
    keywords: ['://'],
    // The scheme is `before`, so the regex starts at the literal `://`.
    pattern: /:\/\/(?<user>[^\s:@/?#"'`<>\\]{1,256}):(?<secret>[^\s:@/?#"'`<>\\${}]{1,256})@[a-zA-Z0-9[]/dg,
    before: /\b[a-zA-Z][a-zA-Z0-9+.-]{1,20}$/,
    allow: /^(?:pass(?:word|wd)?|secret|token|changeme|x+|\*+|\.+|<[^>]*>)$/i,
    source: 'corral',
  },
];
