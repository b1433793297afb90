import { readFileSync } from 'node:fs';
import path from 'node:path';
import { findSecretShapes } from '../../text/find-secrets.js';

// A secret-named file that git tracks is already in every clone of the repository; what
// the guard keeps from `git show`, `git diff` and `git log -p` is the credential in it.
// Settings files such as `.npmrc` or `.env` are often committed with nothing secret in
// them (`engine-strict=true`, `PORT=3000`): refusing every history read in such a
// repository refused harmless work and no rule could lift it. So these files count as
// secrets when their content holds a credential; keys and credential stores always do.

/** Secret-named files whose content says whether they hold a credential. */
const SETTINGS_FILES = [/^\.env(\..+)?$/, /^\.npmrc$/, /^\.yarnrc(\.yml)?$/, /^\.pypirc$/];

/** Above this size a file is not read: it counts as holding a secret. */
const READ_LIMIT = 1024 * 1024;

/** Keys whose values are credentials: `API_KEY=…`, `_authToken=…`, `password: …`. */
const CREDENTIAL_KEY = /(secret|token|passw(or)?d|passwd|pwd|api[_-]?key|access[_-]?key|private[_-]?key|auth|credential|session|cookie|signing|client[_-]?key|dsn)/i;

/** Values that only point at a credential kept elsewhere, or stand in for one. */
const PLACEHOLDER = /^(\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|%[A-Za-z_][A-Za-z0-9_]*%|<[^>]*>|x+|\*+|changeme|change-me|replace[-_]?me|todo|none|null|false|true|example|your[-_].*)$/i;

/** Whether a tracked secret-named file (real path) holds a credential, judged from its content where its kind allows. */
export function holdsCredential(file: string): boolean {
  if (!SETTINGS_FILES.some((pattern) => pattern.test(path.basename(file)))) return true;
  let text: string;
  try {
    const bytes = readFileSync(file);
    if (bytes.length > READ_LIMIT || bytes.includes(0)) return true;
    text = bytes.toString('utf8');
  } catch {
    // Gone or unreadable on disk; git still has it: fail closed.
    return true;
  }
  return textHoldsCredential(text);
}

/** A token by its shape, a private key block, a URL with a password, or a credential-named key with a literal value. */
export function textHoldsCredential(text: string): boolean {
  if (findSecretShapes(text).length > 0) return true;
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(text)) return true;
  if (/[a-z][a-z0-9+.-]*:\/\/[^\s/:@]+:[^\s/@]+@/i.test(text)) return true;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    // `KEY=value` (dotenv, ini: `//registry/:_authToken=…`), else `key: value` (YAML, JSON).
    const at = line.includes('=') ? line.indexOf('=') : line.indexOf(':');
    if (at <= 0) continue;
    const key = line.slice(0, at);
    if (!CREDENTIAL_KEY.test(key)) continue;
    const value = line.slice(at + 1).trim().replace(/,$/, '').replace(/^["']|["']$/g, '').trim();
    if (value !== '' && !PLACEHOLDER.test(value)) return true;
  }
  return false;
}
