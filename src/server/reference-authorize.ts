// What a reference page says, near its top, about authorizing "Try it out": for each security scheme the
// role's operations use, which credentials a freshly started system has and where they come from (never a
// password), and how client registration, routed by its Host on the gateway, is reached from the page.
import type { OpenApiDocument } from '../lib/spec-catalog.ts';
import { listOperations } from '../lib/spec-catalog.ts';

/** What the pages may say about the system's accounts: names and settings only, never a password. */
export type AuthorizationFacts = {
  /** The administrative user (PORTOLAN_ADMIN_USER). */
  adminUser: string;
  /** The access profile registration checks its users against (PORTOLAN_REGISTRATION_ACCESS_PROFILE). */
  registrationAccessProfile: string;
};

type SecurityScheme = { type?: string; scheme?: string; in?: string; name?: string };

/** A scheme an operation of the page uses, by name, with its definition. */
export type UsedScheme = { name: string; scheme: SecurityScheme };

/**
 * The security schemes the operations of these documents use (operation level, else document level), in
 * the order first met, and whether some operation needs none.
 *
 * @example
 * usedSchemes([deviceConfigPageView]) // { schemes: [{ name: 'basicAuth', ... }, { name: 'vendorAuthToken', ... }], open: true }
 */
export function usedSchemes(documents: readonly OpenApiDocument[]): { schemes: UsedScheme[]; open: boolean } {
  const schemes = new Map<string, UsedScheme>();
  let open = false;
  for (const document of documents) {
    const defined = (document.components?.securitySchemes ?? {}) as Record<string, SecurityScheme>;
    const documentSecurity = (document as { security?: Record<string, unknown>[] }).security;
    for (const op of listOperations(document)) {
      const security = (op.operation.security as Record<string, unknown>[] | undefined) ?? documentSecurity ?? [];
      if (security.length === 0 || security.some((requirement) => Object.keys(requirement).length === 0)) open = true;
      for (const name of security.flatMap((requirement) => Object.keys(requirement))) {
        if (!schemes.has(name) && defined[name]) schemes.set(name, { name, scheme: defined[name] });
      }
    }
  }
  return { schemes: [...schemes.values()], open };
}

/** Whether a document defines a session-cookie scheme (its page lets the browser send and keep cookies). */
export function usesCookieSession(document: OpenApiDocument): boolean {
  const defined = (document.components?.securitySchemes ?? {}) as Record<string, SecurityScheme>;
  return Object.values(defined).some((scheme) => scheme.type === 'apiKey' && scheme.in === 'cookie');
}

/** Where client registration is answered, as the gateway's page shows it. */
export type RegistrationNote = { host: string; path: string };

/**
 * The "How to authorize" section of a page, as HTML (every value escaped): what Authorize takes for each
 * scheme the page's operations use, and client registration's own credentials on the gateway.
 *
 * @example
 * authorizationSection(usedSchemes(docs), { adminUser: 'admin', registrationAccessProfile: 'registration_check' })
 */
export function authorizationSection(
  used: { schemes: readonly UsedScheme[]; open: boolean },
  facts: AuthorizationFacts,
  registration?: RegistrationNote,
): string {
  const items = used.schemes.map(({ name, scheme }) => `<li><b>${escapeHtml(name)}</b> ${schemeHelp(name, scheme, facts)}</li>`);
  if (registration) {
    const profile = escapeHtml(facts.registrationAccessProfile);
    items.push(
      `<li><b>Client registration</b> (<code>POST ${escapeHtml(registration.path)}</code>) needs no Authorize: its form carries the username and password of a user of access profile <code>${profile}</code>, which a fresh system has none of (add one with <code>portolan users add --profile ${profile} &lt;name&gt;</code>; until then it answers 403). The gateway answers registration only for requests whose Host is <code>${escapeHtml(registration.host)}</code>, so this page sends it to <code>http://${escapeHtml(registration.host)}</code>.</li>`,
    );
  }
  if (used.open) items.push('<li>Operations without a lock need no credentials.</li>');
  return `<section class="portolan-note" aria-label="How to authorize"><strong>How to authorize.</strong> Operations with a lock need credentials: press <b>Authorize</b>, fill in a scheme, then <b>Try it out</b>. The browser never asks for a password on this page: a request without credentials, or with wrong ones, shows its 401 here.<ul>${items.join('')}</ul></section>`;
}

/** What Authorize takes for one scheme, on a freshly started system. */
function schemeHelp(name: string, scheme: SecurityScheme, facts: AuthorizationFacts): string {
  const user = `<code>${escapeHtml(facts.adminUser)}</code>`;
  const password =
    'the administrative password: the value of <code>PORTOLAN_ADMIN_PASSWORD</code>, or else the one printed once when the system first started (this page never shows it)';
  const type = scheme.type;
  const httpScheme = scheme.scheme?.toLowerCase();
  if (type === 'http' && httpScheme === 'basic') return `(HTTP Basic): user ${user} and ${password}.`;
  if (type === 'http' && httpScheme === 'bearer')
    return name === 'bearerToken'
      ? '(Bearer token): any token; the gateway checks nothing, it only counts requests per token for its rate limit.'
      : '(Bearer token): see the scheme in Authorize.';
  if (type === 'apiKey' && scheme.in === 'header')
    return `(the <code>${escapeHtml(scheme.name ?? '')}</code> header): the <code>token.token</code> that <code>POST /mgmt/shared/authn/login</code> on this page answers when its body names user ${user} and ${password}.`;
  if (type === 'apiKey' && scheme.in === 'cookie')
    return `(the <code>${escapeHtml(scheme.name ?? '')}</code> cookie): Authorize cannot set a cookie. Log in with <code>POST /resource/loginAction.jsp</code> on the login role's page (user ${user} and ${password}); the browser keeps the session cookie for that host name and sends it with this page's requests. The login answers with a redirect to the diagnostics role, another origin, which the login role's page cannot follow: it shows "Failed to fetch" there, and the cookie is set all the same.`;
  return '(see the scheme in Authorize).';
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}
