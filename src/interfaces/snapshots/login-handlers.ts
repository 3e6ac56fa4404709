import type * as C from '../../../generated/snapshots/types.gen.ts';
import type { AccountStore } from '../../accounts/account-store.ts';
import { accountNameProblem } from '../../accounts/account-store.ts';
import { ADMIN_PROFILE } from '../../accounts/admin-bootstrap.ts';
import { basicAuthorization, type BasicAuthenticator } from '../../accounts/basic-auth.ts';
import { portolanError } from '../../lib/errors.ts';
import { refuse, type Handler, type TypedHandler } from '../../server/handler-types.ts';
import type { Authenticator, AuthOutcome } from '../../server/security.ts';
import { isCrossSiteLogin } from './login-origin.ts';
import type { DiagnosticsSite } from './diagnostics-site.ts';
import type { SessionStore } from './session-store.ts';

/** The session cookie (designed, the real product's name) and the seed's success marker. */
export const SESSION_COOKIE = 'ssosession';
export const COMPLETED_COOKIE = 'sso_completed';

/** One answer for every refused login: it names neither the user id nor which part was wrong. */
const INVALID_CREDENTIALS = 'Invalid user id or password.';
/** One answer for every cross-site login, naming the headers a person can check and nothing they held. */
const CROSS_SITE_LOGIN =
  'Login refused: the request comes from another site (Origin, Referer or Sec-Fetch-Site). Log in from a page of this service or from a script.';
const SESSION_MISSING = 'A session is required; log in first.';
const SESSION_INVALID = 'The session is unknown or expired; log in again.';
/** Account keys of diagnostics users: fixed, so renaming the access profile keeps each user's snapshots. */
const DIAGNOSTICS_ACCOUNT = 'diagnostics';

/** Checks a user id and password; the account key (`diagnostics/alice`, `admin/admin`) or undefined. */
export type CredentialCheck = (userid: string, passwd: string, remoteAddress: string | undefined) => Promise<string | undefined>;

export type CookieOptions = {
  /** Common parent of the login and API host names (`example.com`); empty: host-only cookies. */
  domain: string;
  /** Add `Secure` (TLS terminated in front of the roles). */
  secure: boolean;
  /** `Max-Age` of both cookies: the session's lifetime. */
  lifetimeSeconds: number;
};

export type LoginHandlerDeps = {
  sessions: SessionStore;
  /** Same answer for an unknown user and a wrong password. */
  checkCredentials: CredentialCheck;
  cookie: CookieOptions;
  /** The service's own hosts and origins: a login posted from any other site is refused (login CSRF). */
  site: DiagnosticsSite;
  /**
   * Where the 302 points: the diagnostics role's snapshot list (absolute URL), known once it listens. Given
   * the login request's `Host` (undefined when absent), which it may only use to pick a name the site lists.
   */
  location(requestHost: string | undefined): string;
};

/**
 * The two `Set-Cookie` values of a successful login, as the spec's "Session design" gives them.
 *
 * @example
 * loginCookies('tok', { domain: '', secure: false, lifetimeSeconds: 28800 })
 * // ['ssosession=tok; Path=/; HttpOnly; SameSite=Lax; Max-Age=28800', 'sso_completed=1; Path=/; SameSite=Lax; Max-Age=28800']
 */
export function loginCookies(token: string, cookie: CookieOptions): [string, string] {
  const tail = `; Max-Age=${cookie.lifetimeSeconds}${cookie.domain ? `; Domain=${cookie.domain}` : ''}${cookie.secure ? '; Secure' : ''}`;
  return [`${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Lax${tail}`, `${COMPLETED_COOKIE}=1; Path=/; SameSite=Lax${tail}`];
}

/**
 * The login server's form login (`POST /resource/loginAction.jsp`, seed Authentication C). The form
 * was validated against LoginForm before this runs. Success is a 302 with both cookies and no body;
 * every failure is one 401 in C's error shape (XML or JSON by `Accept`) with no cookie at all. A form a
 * browser posted from another site is 403 before the credentials are looked at, so it neither logs the
 * browser into someone else's account nor counts against the user's login backoff.
 */
export function createLoginHandler(deps: LoginHandlerDeps): { loginDiagnosticsUser: Handler } {
  // The 302 with the cookies is the success; both refusals are rendered in C's error shape by the role app.
  const loginDiagnosticsUser: TypedHandler<C.LoginDiagnosticsUserData, { 302: undefined }, C.LoginDiagnosticsUserErrors> = async (
    request,
  ) => {
    if (isCrossSiteLogin(deps.site, request.headers)) return refuse('forbidden', CROSS_SITE_LOGIN);
    const { userid, passwd } = request.body;
    const account = await deps.checkCredentials(userid, passwd, request.remoteAddress);
    if (account === undefined) return refuse('unauthorized', INVALID_CREDENTIALS);
    const { token } = await deps.sessions.create(account);
    return {
      status: 302,
      body: undefined,
      // no-store: an answer that carries a session must not be kept by a cache on the way.
      headers: {
        location: deps.location(typeof request.headers.host === 'string' ? request.headers.host : undefined),
        'set-cookie': loginCookies(token, deps.cookie),
        'cache-control': 'no-store',
      },
    };
  };
  return { loginDiagnosticsUser };
}

/**
 * The `ssoSession` security scheme: the `ssosession` cookie must name a live session. Missing, unknown
 * and expired sessions are 403 (the spec, after the real product); the principal is the account key.
 * The answer never repeats the cookie.
 */
export function sessionScheme(sessions: SessionStore): Authenticator {
  const deny = (message: string, presented: boolean): AuthOutcome => ({
    ok: false,
    error: portolanError('forbidden', message),
    presented,
  });
  return async ({ cookies }) => {
    const token = cookies[SESSION_COOKIE];
    if (token === undefined || token === '') return deny(SESSION_MISSING, false);
    const account = await sessions.verify(token);
    if (account === undefined) return deny(SESSION_INVALID, true);
    return { ok: true, principal: account };
  };
}

export type CredentialCheckDeps = {
  /** Checks against the diagnostics access profile (`diagnosticsAccessProfile`). */
  diagnostics: BasicAuthenticator;
  /** Checks against the administrative account (the system's `adminAuthenticator`). */
  admin: BasicAuthenticator;
  /** Which profile a user id belongs to, so only that profile's check runs (and counts a failure). */
  accounts: Pick<AccountStore, 'has'>;
  /** The diagnostics access profile's name (setting `diagnosticsAccessProfile`). */
  diagnosticsProfile: string;
};

/**
 * The login server's credential check: users of the diagnostics access profile log in as
 * `diagnostics/<userid>`, the administrative account as `admin/<userid>`; undefined for every failure
 * alike. Each check goes through a BasicAuthenticator, so the login server shares its backoff per
 * user name and client address (a wrong password and an unknown user both cost one password hash).
 *
 * Exactly one profile is checked per attempt, chosen by membership: trying both in turn would count
 * every administrator's login as a failed diagnostics login (and the reverse), and past the address
 * budget the other profile's users on that address would be refused. A user id in both profiles is a
 * diagnostics user; one in neither is checked (and refused) by the diagnostics profile.
 */
export function createCredentialCheck(deps: CredentialCheckDeps): CredentialCheck {
  return async (userid, passwd, remoteAddress) => {
    // No account can have such a name; with a colon, basic authentication would split it elsewhere
    // (`a:b` + `c` is checked as user `a` with password `b:c`) and log in the wrong account.
    if (accountNameProblem('username', userid) !== undefined) return undefined;
    const asAdmin = !(await deps.accounts.has(deps.diagnosticsProfile, userid)) && (await deps.accounts.has(ADMIN_PROFILE, userid));
    const authorization = basicAuthorization(userid, passwd);
    if (asAdmin) return (await deps.admin(authorization, remoteAddress)) ? `${ADMIN_PROFILE}/${userid}` : undefined;
    return (await deps.diagnostics(authorization, remoteAddress)) ? `${DIAGNOSTICS_ACCOUNT}/${userid}` : undefined;
  };
}
