import type { IncomingHttpHeaders } from 'node:http';
import type { PortolanError } from '../lib/errors.ts';
import { parseBasicAuth } from '../accounts/basic-auth.ts';

/** A security scheme of a spec's `components.securitySchemes`, by its name there. */
export type SecurityScheme = {
  name: string;
  type: string;
  /** `basic`, `bearer` for `type: http`. */
  scheme?: string;
  /** Where an `apiKey` is: `header`, `cookie` or `query`, and under which name. */
  in?: string;
  parameterName?: string;
};

/** Schemes that must all pass (one entry of an operation's `security` list). */
export type SecurityRequirement = readonly SecurityScheme[];

/** What an authenticator sees: headers and (when a scheme reads them) cookies; never the body. */
export type Credentials = { headers: IncomingHttpHeaders; cookies: Readonly<Record<string, string>>; remoteAddress?: string };

export type AuthOutcome =
  | { ok: true; principal?: string }
  | {
      ok: false;
      error: PortolanError;
      headers?: Readonly<Record<string, string>>;
      /** The client sent this scheme's credential (and it was wrong): its refusal says more than a "missing" one. */
      presented?: boolean;
    };

/** Checks one scheme; the answer on failure is the interface's (status, message, challenge header). */
export type Authenticator = (credentials: Credentials) => Promise<AuthOutcome> | AuthOutcome;

/** An interface's authenticators, keyed by the scheme names of its spec. */
export type Authenticators = Readonly<Record<string, Authenticator>>;

type Doc = { components?: { securitySchemes?: Record<string, Record<string, unknown>> }; security?: unknown };

/** The security in effect for an operation: its own `security`, else the document's; resolved to schemes. */
export function operationSecurity(document: Doc, operation: Record<string, unknown>): SecurityRequirement[] {
  const declared = (operation.security ?? document.security ?? []) as Record<string, string[]>[];
  const schemes = document.components?.securitySchemes ?? {};
  return declared.map((requirement) =>
    Object.keys(requirement).map((name) => {
      const scheme = schemes[name];
      if (!scheme) throw new Error(`security scheme ${name} is used but not declared in components.securitySchemes`);
      return {
        name,
        type: String(scheme.type),
        ...(scheme.scheme ? { scheme: String(scheme.scheme).toLowerCase() } : {}),
        ...(scheme.in ? { in: String(scheme.in) } : {}),
        ...(scheme.name ? { parameterName: String(scheme.name) } : {}),
      };
    }),
  );
}

/** True when the operation can be called without credentials (no requirement, or an empty one). */
export const isOpen = (requirements: readonly SecurityRequirement[]) =>
  requirements.length === 0 || requirements.some((r) => r.length === 0);

/**
 * Runs the requirements in order: the first alternative whose schemes all pass wins. When none does,
 * the answer is the first refusal of a credential the client did send (a wrong password, an expired
 * token), else the first failure of the first alternative (the spec lists the usual way first).
 */
export async function authenticate(
  requirements: readonly SecurityRequirement[],
  authenticators: Authenticators,
  credentials: Credentials,
): Promise<AuthOutcome> {
  if (isOpen(requirements)) return { ok: true };
  let firstFailure: AuthOutcome | undefined;
  let firstPresented: AuthOutcome | undefined;
  for (const requirement of requirements) {
    let outcome: AuthOutcome = { ok: true };
    for (const scheme of requirement) {
      outcome = await authenticators[scheme.name]!(credentials);
      if (!outcome.ok) break;
    }
    if (outcome.ok) return outcome;
    firstFailure ??= outcome;
    if (outcome.presented) firstPresented ??= outcome;
  }
  return firstPresented ?? firstFailure!;
}

/** The schemes a role's operations use that no authenticator covers (checked at start). */
export function missingAuthenticators(requirements: readonly SecurityRequirement[], authenticators: Authenticators): string[] {
  return [...new Set(requirements.flat().map((s) => s.name))].filter((name) => !authenticators[name]);
}

/**
 * An HTTP basic-authentication scheme over a credentials check: missing and wrong credentials are
 * refused with the interface's messages and challenge; the answer never repeats what was sent.
 */
export function basicScheme(
  check: (authorization: string | string[] | undefined, from?: string) => Promise<boolean>,
  refusal: { missing: string; wrong: string; challenge: string; code?: 'unauthorized' | 'forbidden' },
): Authenticator {
  const headers = { 'www-authenticate': refusal.challenge };
  const code = refusal.code ?? 'unauthorized';
  return async ({ headers: request, remoteAddress }) => {
    const header = request.authorization;
    if (header === undefined || header === '') return { ok: false, error: { code, message: refusal.missing }, headers };
    if (!(await check(header, remoteAddress))) return { ok: false, error: { code, message: refusal.wrong }, headers, presented: true };
    return { ok: true, principal: parseBasicAuth(header)?.username };
  };
}

/**
 * A token sent in a request header (an `apiKey` scheme `in: header`): missing and unknown or expired
 * tokens are refused with the interface's messages and challenge; the answer never repeats the token.
 */
export function headerTokenScheme(
  header: string,
  verify: (token: string) => Promise<{ username: string } | undefined>,
  refusal: { missing: string; invalid: string; challenge?: string },
): Authenticator {
  const name = header.toLowerCase();
  const headers = refusal.challenge ? { 'www-authenticate': refusal.challenge } : undefined;
  const refuse = (message: string, presented: boolean): AuthOutcome => ({
    ok: false,
    error: { code: 'unauthorized', message },
    presented,
    ...(headers ? { headers } : {}),
  });
  return async ({ headers: request }) => {
    const value = request[name];
    if (value === undefined || value === '') return refuse(refusal.missing, false);
    const user = typeof value === 'string' ? await verify(value.trim()) : undefined;
    if (!user) return refuse(refusal.invalid, true);
    return { ok: true, principal: user.username };
  };
}
