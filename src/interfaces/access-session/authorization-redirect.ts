/**
 * The seed's custom authorization request: the default request for the identity platform
 * (response_type, client_id, redirect_uri, scope, state), cloned, plus the custom parameter
 * `login_hint` = `%{session.ad.last.attr.userPrincipalName}`; `prompt` is added the same way
 * when asked for (designed, after the real product).
 */

/** The default request's settings (accessSession* / authorization* in the configuration). */
export type AuthorizationRequestSettings = {
  /** The identity provider's authorization endpoint; it may carry a query of its own, never a fragment. */
  authorizationUrl: string;
  clientId: string;
  redirectUri: string;
  scope: string;
};

export const PROMPTS = ['login', 'none', 'consent', 'select_account'] as const;
export type Prompt = (typeof PROMPTS)[number];

export type RedirectRequest = {
  /** The value of the session's user principal name variable. */
  loginHint: string;
  /** A fresh random value for this redirect. */
  state: string;
  prompt?: Prompt | undefined;
};

/**
 * Compiles the request once (a wrong authorization URL fails here, at start, not per request) into
 * a function giving the redirect URL: the authorization endpoint with the request's parameters
 * appended in order, each value percent-encoded with encodeURIComponent (a space is `%20`, `@` `%40`).
 *
 * @example
 * const redirectTo = createAuthorizationRequest(settings);
 * redirectTo({ loginHint: 'alice@example.com', state: 'Jk2v' })
 * // 'https://login.example.com/common/oauth2/v2.0/authorize?response_type=code&client_id=portolan-gateway&...&state=Jk2v&login_hint=alice%40example.com'
 */
export function createAuthorizationRequest(settings: AuthorizationRequestSettings): (request: RedirectRequest) => string {
  const endpoint = URL.parse(settings.authorizationUrl);
  if (!endpoint || !/^https?:$/.test(endpoint.protocol) || endpoint.href.includes('#')) {
    throw new Error('authorizationUrl must be an http(s) URL without a fragment');
  }
  // An empty query (`...authorize?`) has search '' but keeps its `?` in href.
  const prefix = `${endpoint.href}${endpoint.search ? '&' : endpoint.href.endsWith('?') ? '' : '?'}`;
  return ({ loginHint, state, prompt }) => {
    const parameters: Array<[string, string]> = [
      ['response_type', 'code'],
      ['client_id', settings.clientId],
      ['redirect_uri', settings.redirectUri],
      ['scope', settings.scope],
      ['state', state],
      ['login_hint', loginHint],
    ];
    if (prompt !== undefined) parameters.push(['prompt', prompt]);
    return prefix + parameters.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join('&');
  };
}
