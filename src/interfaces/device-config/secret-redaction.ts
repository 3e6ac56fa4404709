/** Property names that mark a secret in a declaration (AS3's `passphrase`, `privateKey`, `Secret.secret`, `ciphertext`, ...). */
const SECRET_KEY = /pass(?:word|phrase|wd)|secret|private_?key|token|ciphertext|credential|api_?key/i;

export const REDACTED = '[redacted]';

/**
 * A copy of a JSON value with the value of every property whose name marks a secret replaced by
 * `[redacted]`, at any depth. Declarations may carry members the device does not model but keeps
 * (a `Certificate` with its private key and passphrase); a snapshot leaves the device, they must not.
 *
 * @example redactSecrets({ cert: { class: 'Certificate', privateKey: '-----BEGIN...' } })
 * // { cert: { class: 'Certificate', privateKey: '[redacted]' } }
 */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, SECRET_KEY.test(key) ? REDACTED : redactSecrets(inner)]));
}
