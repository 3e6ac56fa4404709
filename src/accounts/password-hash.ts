import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * scrypt cost parameters. N = 2^14, r = 8 costs ~55 ms and 16 MiB a hash on the development
 * machines: slow enough to make guessing expensive, fast enough for a login or a CLI call.
 */
export type ScryptParameters = { ln: number; r: number; p: number };
export const DEFAULT_SCRYPT: ScryptParameters = { ln: 14, r: 8, p: 1 };

const SALT_BYTES = 16;
const KEY_BYTES = 32;
// A stored hash is data: refuse parameters far outside what this code writes, so a forged row
// cannot make one verification take minutes or gigabytes.
const LIMITS = { ln: [10, 20], r: [1, 32], p: [1, 16] } as const;
const FORMAT = /^\$scrypt\$ln=(\d{1,2}),r=(\d{1,2}),p=(\d{1,2})\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

function derive(password: string, salt: Buffer, keyBytes: number, { ln, r, p }: ScryptParameters): Promise<Buffer> {
  const N = 2 ** ln;
  const options: ScryptOptions = { N, r, p, maxmem: 256 * N * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, keyBytes, options, (e, key) => (e ? reject(e) : resolve(key))),
  );
}

const b64 = (bytes: Buffer) => bytes.toString('base64').replace(/=+$/, '');

/**
 * Hashes a password into a self-describing string in the PHC format, so parameters can change later
 * without breaking stored hashes.
 *
 * @example
 * await hashPassword('c0rrect horse') // '$scrypt$ln=14,r=8,p=1$<salt>$<hash>'
 */
export async function hashPassword(password: string, parameters: ScryptParameters = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, KEY_BYTES, parameters);
  return `$scrypt$ln=${parameters.ln},r=${parameters.r},p=${parameters.p}$${b64(salt)}$${b64(key)}`;
}

/** Parses a stored hash; undefined when it is not one this code can verify (never throws). */
export function parsePasswordHash(encoded: string): { parameters: ScryptParameters; salt: Buffer; key: Buffer } | undefined {
  const match = FORMAT.exec(encoded);
  if (!match) return undefined;
  const parameters = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  for (const name of ['ln', 'r', 'p'] as const) {
    const [min, max] = LIMITS[name];
    if (parameters[name] < min || parameters[name] > max) return undefined;
  }
  const salt = Buffer.from(match[4]!, 'base64');
  const key = Buffer.from(match[5]!, 'base64');
  if (salt.length < 8 || key.length < 16) return undefined;
  return { parameters, salt, key };
}

/** Whether `password` matches `encoded`, compared in constant time; a malformed hash never matches. */
export async function verifyPassword(password: string, encoded: string): Promise<boolean> {
  const parsed = parsePasswordHash(encoded);
  if (!parsed) return false;
  const key = await derive(password, parsed.salt, parsed.key.length, parsed.parameters);
  return timingSafeEqual(key, parsed.key);
}
