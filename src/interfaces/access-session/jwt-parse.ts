/**
 * The seed's `jwt-parse` policy agent as a pure function: it splits an identity token into session
 * variables by the seed's text rules, not by a JSON parser (the scripted agent of controllers before
 * 13.1 works this way), and validates no signature.
 */
import { decodePart, type PartName } from './base64-part.ts';
import { ID_TOKEN, MEMBER_PREFIX, RAW_PART, type SessionVariables } from './variables.ts';

export type JwtParseOptions = {
  /** Longest token accepted, in characters (the accessSessionMaxTokenLength setting). */
  maxTokenLength: number;
};

export type JwtParseOutcome = { ok: true; variables: SessionVariables } | { ok: false; message: string };

/**
 * Members of one decoded part, in order: braces, brackets and double quotes removed, split at
 * commas, each member split at its first colon. Nothing is trimmed; a member without a colon has an
 * empty value; an empty member is skipped. Nested values flatten: `"amr":["pwd","mfa"]` gives
 * `amr` = `pwd` and `mfa` = ``.
 */
export function splitMembers(text: string): Array<[name: string, value: string]> {
  const members: Array<[string, string]> = [];
  for (const member of text.replace(/[{}[\]"]/g, '').split(',')) {
    if (member === '') continue;
    const colon = member.indexOf(':');
    members.push(colon === -1 ? [member, ''] : [member.slice(0, colon), member.slice(colon + 1)]);
  }
  return members;
}

const parts = (count: number) => `${count} dot-separated part${count === 1 ? '' : 's'}`;

/**
 * Parses an identity token into the seed's session variables: the three raw parts, then one
 * variable per header member and one per payload member (a later member of the same name wins).
 * A malformed token is a failure value whose message names the part and the reason, never the token.
 *
 * @example
 * parseIdentityToken('eyJhbGciOiJub25lIn0.eyJzdWIiOiJhIn0.', { maxTokenLength: 16384 })
 * // { ok: true, variables: { 'session.oauth.jwt.last.header': 'eyJhbGciOiJub25lIn0', ...,
 * //   'session.oauth.jwt.header.last.alg': 'none', 'session.oauth.jwt.payload.last.sub': 'a' } }
 */
export function parseIdentityToken(token: string, options: JwtParseOptions): JwtParseOutcome {
  if (token.length > options.maxTokenLength) {
    return { ok: false, message: `${ID_TOKEN} is ${token.length} characters long; the limit is ${options.maxTokenLength}` };
  }
  const split = token.split('.');
  if (split.length !== 3) return { ok: false, message: `${ID_TOKEN} has ${parts(split.length)}; 3 expected` };
  const [header, payload, signature] = split as [string, string, string];

  const decoded: Array<[PartName, string]> = [];
  for (const [name, part] of [
    ['header', header],
    ['payload', payload],
  ] as const) {
    const result = decodePart(name, part);
    if (!result.ok) return result;
    decoded.push([name, result.text]);
  }
  const variables = new Map<string, string>([
    [RAW_PART.header, header],
    [RAW_PART.payload, payload],
    [RAW_PART.signature, signature],
  ]);
  for (const [name, text] of decoded) {
    for (const [member, value] of splitMembers(text)) variables.set(`${MEMBER_PREFIX[name]}${member}`, value);
  }
  return { ok: true, variables: Object.fromEntries(variables) };
}
