import { hash } from 'node:crypto';

/** Longest bearer token counted; a longer one is refused unhashed (a header may hold 16 KB or more). */
export const MAX_TOKEN_LENGTH = 4096;

/** How the limiter reads the `Authorization` fields of a request (specs/rate-limit.yaml, "Which requests are limited"). */
export type BearerReading =
  /** No field has the Bearer scheme (any case) or contains `Bearer`: not limited, not counted (seed E). */
  | { kind: 'none' }
  /** `Bearer <token>` as RFC 6750 reads it: counted under the SHA-1 of `token`. */
  | { kind: 'token'; token: string }
  /** A field mentions `bearer` but is not one `Bearer <token>`: refused (400), never passed on uncounted. */
  | { kind: 'malformed'; reason: string };

// The scheme matched case-insensitively (RFC 9110 11.1), then any run of spaces or tabs, then one token. The token
// is any visible ASCII but a comma: RFC 6750's b64token is narrower, but the seed counts whatever the second field
// is, and a real token with another character must still be counted, not refused. node:http has already trimmed
// the value's own leading and trailing whitespace.
const BEARER = /^[ \t]*bearer[ \t]+([\x21-\x2b\x2d-\x7e]+)[ \t]*$/i;
// A field is about Bearer when its scheme is (any case), or when it contains `Bearer` as the seed reads it (case-
// sensitive, anywhere). Not merely `bearer` somewhere in any case: a Basic credential's base64 may contain that.
const SCHEME_IS_BEARER = /^[ \t]*bearer(?![!#$%&'*+.^_`|~0-9A-Za-z-])/i;
const mentionsBearer = (field: string): boolean => field.includes('Bearer') || SCHEME_IS_BEARER.test(field);

const NONE: BearerReading = { kind: 'none' };
const SEVERAL: BearerReading = {
  kind: 'malformed',
  reason: 'The request has several Authorization header fields and one of them names Bearer; send one field, "Bearer <token>".',
};
const NOT_BEARER_FORM: BearerReading = {
  kind: 'malformed',
  reason:
    'The Authorization header names Bearer but is not "Bearer <token>" (RFC 6750: one token of letters, digits and -._~+/, optionally ending in =).',
};
const TOO_LONG: BearerReading = { kind: 'malformed', reason: `The bearer token is longer than ${MAX_TOKEN_LENGTH} characters.` };

/**
 * The bearer token of a request's `Authorization` field(s), as RFC 6750 reads it. The seed's form,
 * `Bearer T`, gives `T` exactly as the seed's rule does (the second space-separated field); every other
 * spelling RFC 6750 accepts (`bearer T`, `BEARER T`, several spaces or tabs) gives the same `T`, so it counts
 * against the same key. A field whose scheme is Bearer (any case) or that contains `Bearer`, but is not that form (`Basic x Bearer T`,
 * `Bearer` alone, `Bearer T extra`, `Bearer a,b`, a non-ASCII space), several fields one of which mentions it,
 * or a token over MAX_TOKEN_LENGTH is `malformed`: the gateway refuses it, since the seed's rule would have
 * counted it under some other key or none while the member behind might still read a token from it.
 *
 * @example
 * readBearerToken('Bearer abc');           // { kind: 'token', token: 'abc' }
 * readBearerToken('bearer \t abc');         // { kind: 'token', token: 'abc' }
 * readBearerToken('Basic x Bearer abc');   // { kind: 'malformed', reason: '...' }
 * readBearerToken('Basic dXNlcjpwYXNz');   // { kind: 'none' }
 */
export function readBearerToken(authorization: string | readonly string[] | undefined): BearerReading {
  if (authorization === undefined) return NONE;
  if (typeof authorization !== 'string') {
    if (authorization.length <= 1) return readBearerToken(authorization[0]);
    return authorization.some(mentionsBearer) ? SEVERAL : NONE;
  }
  const match = BEARER.exec(authorization);
  if (match) return match[1]!.length > MAX_TOKEN_LENGTH ? TOO_LONG : { kind: 'token', token: match[1]! };
  return mentionsBearer(authorization) ? NOT_BEARER_FORM : NONE;
}

/**
 * Every `Authorization` field of a raw header list (`[name, value, ...]`): one string for the usual single
 * field, a list when there are several (node:http's `headers.authorization` keeps only the first; the member
 * behind the gateway receives them all), undefined for none.
 */
export function authorizationFields(rawHeaders: readonly string[]): string | string[] | undefined {
  let found: string | string[] | undefined;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    if (name.length !== 13 || name.toLowerCase() !== 'authorization') continue;
    const value = rawHeaders[i + 1]!;
    found = found === undefined ? value : typeof found === 'string' ? [found, value] : [...found, value];
  }
  return found;
}

/**
 * The counter key of a token: its SHA-1 digest in hex. The token itself is never stored or logged.
 * One-shot `crypto.hash` is several times faster than `createHash` for short inputs.
 */
export const counterKey = (token: string): string => hash('sha1', token);
