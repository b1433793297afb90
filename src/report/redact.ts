// Secrets never reach a trace, a JSON report, a summary or a kept patch. Two nets: the
// values of the host's own secret-named variables (whatever their shape), and strings
// shaped like well-known API keys.
const KEY_SHAPES = [
  /sk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abpors]-[A-Za-z0-9-]{10,}/g,
];

/** Names of variables that hold credentials by convention. */
export const SECRET_NAME = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

/** A value shorter than this is too likely to occur by chance to be redacted by value. */
const MIN_SECRET_LENGTH = 8;

export interface SecretValue {
  name: string;
  value: string;
}

/** The secret-named variables of an environment, to be found and redacted by value. */
export function secretValues(env: NodeJS.ProcessEnv): SecretValue[] {
  return Object.entries(env)
    .filter((entry): entry is [string, string] => SECRET_NAME.test(entry[0]) && (entry[1]?.length ?? 0) >= MIN_SECRET_LENGTH)
    .map(([name, value]) => ({ name, value }));
}

export type Redactor = (text: string) => string;

export function createRedactor(secrets: SecretValue[]): Redactor {
  return (text) => {
    let out = text;
    for (const { name, value } of secrets) out = out.split(value).join(`[REDACTED ${name}]`);
    for (const shape of KEY_SHAPES) out = out.replace(shape, (m) => `${m.slice(0, 6)}…[REDACTED]`);
    return out;
  };
}

/** Shape-only redaction, for text with no environment at hand. */
export const redactSecrets: Redactor = createRedactor([]);

/** Redacts every string inside a JSON-able value. */
export function redactValue<T>(value: T, redact: Redactor = redactSecrets): T {
  return JSON.parse(redact(JSON.stringify(value))) as T;
}

/** The names of the secrets whose values occur in `bytes`. */
export function findSecretValues(bytes: Buffer, secrets: SecretValue[]): string[] {
  return secrets.filter(({ value }) => bytes.includes(value)).map(({ name }) => name);
}
