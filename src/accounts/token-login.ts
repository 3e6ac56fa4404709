import type { IssuedToken, TokenGrant, TokenService } from './auth-tokens.ts';
import { accountNameProblem } from './account-store.ts';
import { basicAuthorization, type BasicAuthenticator } from './basic-auth.ts';

/** The login providers of the local accounts: the device's `tmos`, the management system's `local` (the same accounts here). */
export const LOCAL_PROVIDERS: ReadonlySet<string> = new Set(['tmos', 'local']);

const micros = (ms: number) => ms * 1000;

/** A token as the real products answer it (`token` of the login and exchange answers). */
export function tokenState(issued: IssuedToken, username: string, provider: string, address: string) {
  return {
    token: issued.token,
    name: issued.token,
    userName: username,
    authProviderName: provider,
    user: { link: `https://localhost/mgmt/shared/authz/users/${encodeURIComponent(username)}` },
    groupReferences: [],
    timeout: issued.timeoutSeconds,
    startTime: new Date(issued.startMs).toISOString(),
    address,
    partition: '[All]',
    generation: 1,
    lastUpdateMicros: micros(issued.startMs),
    expirationMicros: micros(issued.expiresMs),
    kind: 'shared:authz:tokens:authtokenitemstate' as const,
    selfLink: `https://localhost/mgmt/shared/authz/tokens/${issued.token}`,
  };
}

const refreshTokenState = (issued: IssuedToken) => ({
  token: issued.token,
  timeout: issued.timeoutSeconds,
  expirationMicros: micros(issued.expiresMs),
});

/** The answer of a successful login (REAL-PRODUCTS.md B; the device answers the same). */
export function loginResponse(grant: TokenGrant, provider: string) {
  return {
    username: grant.username,
    loginReference: { link: `https://localhost/mgmt/cm/system/authn/providers/${provider}/login` },
    loginProviderName: provider,
    token: tokenState(grant.access, grant.username, provider, grant.address),
    refreshToken: refreshTokenState(grant.refresh),
    generation: 0,
    lastUpdateMicros: 0,
  };
}

/**
 * Token login over the local accounts: the password is checked like basic authentication (the same
 * accounts, the same backoff per user name and client address); undefined for every failure alike
 * (wrong password, unknown user, unknown provider).
 */
export function createTokenLogin(deps: { tokens: TokenService; checkPassword: BasicAuthenticator }) {
  return {
    async login(username: string, password: string, provider: string, address: string) {
      if (!LOCAL_PROVIDERS.has(provider)) return undefined;
      // A name no account can have (a colon would split user and password in the basic header) is refused as such.
      if (accountNameProblem('username', username)) return undefined;
      if (!(await deps.checkPassword(basicAuthorization(username, password), address))) return undefined;
      return loginResponse(await deps.tokens.issue(username, address), provider);
    },
    /**
     * The real products answer `{token}`; the refresh token given is used up (auth-tokens.ts), so the answer
     * also carries its successor (designed: `refreshToken`, as in the login answer).
     */
    async exchange(refreshToken: string, address: string, provider: string) {
      const exchanged = await deps.tokens.exchange(refreshToken, address);
      return exchanged
        ? {
            token: tokenState(exchanged.access, exchanged.username, provider, exchanged.address),
            refreshToken: refreshTokenState(exchanged.refresh),
          }
        : undefined;
    },
  };
}
