// API-key-shaped strings never reach a trace, a JSON report or a printed patch.
const KEY_SHAPES = [
  /sk-ant-[A-Za-z0-9_-]{8,}/g,
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bAKIA[0-9A-Z]{16}\b/g,
  /\bxox[abpors]-[A-Za-z0-9-]{10,}/g,
];

export function redactSecrets(text: string): string {
  let out = text;
  for (const shape of KEY_SHAPES) out = out.replace(shape, (m) => `${m.slice(0, 6)}…[REDACTED]`);
  return out;
}

/** Redacts every string inside a JSON-able value. */
export function redactValue<T>(value: T): T {
  return JSON.parse(redactSecrets(JSON.stringify(value))) as T;
}
