import { hash } from 'node:crypto';

/**
 * The bearer token of an `Authorization` header, as the seed reads it: the header must contain
 * `Bearer` (case-sensitive, anywhere) and the token is its second space-separated field. An empty or
 * missing second field is no token. A header sent several times counts as its first value (node
 * gives an array only for headers it does not fold; `Authorization` is normally a single string).
 *
 * @example
 * extractToken('Bearer abc');     // 'abc'
 * extractToken('Bearer  abc');    // undefined (the second field is empty)
 * extractToken('Basic dXNlcg=='); // undefined
 */
export function extractToken(authorization: string | string[] | undefined): string | undefined {
  const header = Array.isArray(authorization) ? authorization[0] : authorization;
  if (header === undefined || !header.includes('Bearer')) return undefined;
  const token = header.split(' ')[1];
  return token ? token : undefined;
}

/**
 * The counter key of a token: its SHA-1 digest in hex. The token itself is never stored or logged.
 * One-shot `crypto.hash` is several times faster than `createHash` for short inputs.
 */
export const counterKey = (token: string): string => hash('sha1', token);
