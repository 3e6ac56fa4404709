/** The session variable names of seed section H (Resources H), in one place. */

/** Input of the jwt-parse agent: the identity token the OAuth client step stored. */
export const ID_TOKEN = 'session.oauth.client.last.id_token';

/** The user principal name the directory query stored; the value of the redirect's `login_hint`. */
export const USER_PRINCIPAL_NAME = 'session.ad.last.attr.userPrincipalName';

/** The three raw parts of the identity token. */
export const RAW_PART = {
  header: 'session.oauth.jwt.last.header',
  payload: 'session.oauth.jwt.last.payload',
  signature: 'session.oauth.jwt.last.signature',
} as const;

/** One variable per top-level member: the prefix followed by the member's name. */
export const MEMBER_PREFIX = {
  header: 'session.oauth.jwt.header.last.',
  payload: 'session.oauth.jwt.payload.last.',
} as const;

/** Session variables by name; always built with Object.fromEntries or Maps, so `__proto__` stays a name. */
export type SessionVariables = Record<string, string>;
