import { getAtPointer, resolveRef } from '../src/lib/contract/json-pointer.ts';
import { fromEnv, type AuthData } from './data-files.ts';
import type { HttpRequest, HttpResponse } from './http.ts';
import { interpolate, type Scope } from './interpolate.ts';
import { bodyMedia, exampleParts, renderRequest, type RequestParts } from './request-parts.ts';
import { curlCommand, type Secret } from './reproduce.ts';
import type { SpecOperation, SpecSet } from './spec-set.ts';
import { withoutCredentials } from './targets.ts';

// biome-ignore lint/suspicious/noExplicitAny: a parsed OpenAPI document walked generically (its shape is checked by the spec lint, not by types)
type Json = Record<string, any>;

export type Credential = { user: string; password: string };

/** How a request to one operation is authenticated. */
export type AuthPlan =
  /** The operation accepts requests without credentials (`security: []` or a `{}` alternative). */
  | { kind: 'none' }
  | {
      kind: 'ready';
      apply(parts: RequestParts): void;
      /** Puts credentials the target must refuse instead (undefined when the scheme has none: bearer). */
      wrong: ((parts: RequestParts) => void) | undefined;
    }
  /** No credential could be had; `notImplemented` when the login operation answers 501. */
  | { kind: 'unavailable'; reason: string; notImplemented: boolean };

/** The shell variables that hold a credential's user (when it came from one) and password, for reproduce lines. */
export type CredentialVariables = Record<string, { user?: string; password: string }>;

/** What a login gave, for the hints: the cookies it set and the one its scheme sends. */
export type LoginNote = { scheme: string; operationId: string; cookie?: string; set: string[] };

export type AuthenticatorOptions = {
  specs: SpecSet;
  data: AuthData;
  credentials: Record<string, Credential | undefined>;
  /** Where each credential came from (credentialVariables): printed instead of its value. */
  variables?: CredentialVariables;
  scope: Scope;
  /** The base URL of a login operation. */
  urlOf(target: SpecOperation): string | undefined;
  send(request: HttpRequest): Promise<HttpResponse>;
};

type SchemeValue =
  | { ok: true; apply(parts: RequestParts): void; wrong?: (parts: RequestParts) => void }
  | { ok: false; reason: string; notImplemented?: boolean };

/**
 * Authentication driven by each operation's `security` and the scheme data of auth.yaml: basic
 * credentials, bearer tokens, and apiKey values obtained by a login operation (once per run and URL).
 */
export function createAuthenticator(options: AuthenticatorOptions) {
  const logins = new Map<string, Promise<SchemeValue>>();
  /** Values logins gave (tokens, session cookies): secrets of the reproduce lines. */
  const obtained: Secret[] = [];
  const notes: LoginNote[] = [];
  const credentialSecrets = (): Secret[] =>
    Object.entries(options.credentials).flatMap(([name, c]) => {
      // Never printed, even without a variable name: then one made from the credential's name.
      const vars = options.variables?.[name] ?? { password: `${name.toUpperCase()}_PASSWORD` };
      if (!c) return [];
      return [{ value: c.password, variable: vars.password }, ...(vars.user ? [{ value: c.user, variable: vars.user }] : [])];
    });

  async function schemeValue(target: SpecOperation, name: string): Promise<SchemeValue> {
    const scheme = resolveRef<Json>(target.spec.document, (target.spec.document.components?.securitySchemes as Json | undefined)?.[name]);
    const data = options.data.schemes[name];
    if (!scheme) return { ok: false, reason: `security scheme ${name} is not declared` };
    if (!data) return { ok: false, reason: `security scheme ${name} has no entry in conformance/data/auth.yaml` };
    const credential = data.credential ? options.credentials[data.credential] : undefined;
    if (data.credential && !credential)
      return { ok: false, reason: `credential '${data.credential}' is not configured (see conformance/data/auth.yaml)` };

    if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'basic') {
      if (!credential) return { ok: false, reason: `security scheme ${name} names no credential` };
      const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      return {
        ok: true,
        apply: (parts) => void (parts.headers.authorization = basic(credential.user, credential.password)),
        wrong: (parts) => void (parts.headers.authorization = basic(credential.user, `${credential.password}-not-this-one`)),
      };
    }
    if (scheme.type === 'http' && String(scheme.scheme).toLowerCase() === 'bearer') {
      const token = String(interpolate(data.token ?? 'conformance-$' + '{runId}', options.scope));
      return { ok: true, apply: (parts) => void (parts.headers.authorization = `Bearer ${token}`) };
    }
    if (scheme.type === 'apiKey') {
      if (!data.login || !credential) return { ok: false, reason: `security scheme ${name} needs a login in conformance/data/auth.yaml` };
      const login = options.specs.find(data.login.operationId);
      if (!login) return { ok: false, reason: `login operation ${data.login.operationId} is in no spec` };
      const url = options.urlOf(login);
      if (!url) return { ok: false, reason: `no target for the login operation ${data.login.operationId}` };
      const key = `${name} ${url}`;
      if (!logins.has(key)) logins.set(key, logIn(name, login, url, data.login, credential, scheme));
      return logins.get(key)!;
    }
    return { ok: false, reason: `security scheme ${name} of type ${scheme.type} is not supported` };
  }

  async function logIn(
    schemeName: string,
    login: SpecOperation,
    url: string,
    how: NonNullable<AuthData['schemes'][string]['login']>,
    credential: Credential,
    scheme: Json,
  ): Promise<SchemeValue> {
    const media = bodyMedia(login.spec.document, login.op)[0];
    const body = interpolate(how.body, { ...options.scope, user: credential.user, password: credential.password });
    const parts = exampleParts(login.spec.document, login.op, media ? { mediaType: media.mediaType, value: body } : undefined);
    const request = await renderRequest(url, login.op, parts);
    const variable = schemeName.replace(/([a-z\d])([A-Z])/g, '$1_$2').toUpperCase();
    const origin = (what: string) => () =>
      [`# ${variable}: ${what} of the answer to this login:`, ...curlCommand(request, credentialSecrets()).split('\n')]
        .map((line) => (line.startsWith('# ') ? line : `#   ${line}`))
        .join('\n');
    let res: HttpResponse;
    try {
      res = await options.send(request);
    } catch (error) {
      return { ok: false, reason: withoutCredentials(`login ${login.op.operationId} failed: ${(error as Error).message}`) };
    }
    if (res.status === 501) return { ok: false, reason: `login ${login.op.operationId} is not implemented (501)`, notImplemented: true };
    if (res.status >= 400) return { ok: false, reason: `login ${login.op.operationId} answered ${res.status} (check the credential)` };
    if (how.take.cookies) {
      const cookies = setCookies(res.headers['set-cookie']);
      const named = scheme.in === 'cookie' ? String(scheme.name) : undefined;
      notes.push({ scheme: schemeName, operationId: login.op.operationId, ...(named ? { cookie: named } : {}), set: Object.keys(cookies) });
      if (Object.keys(cookies).length === 0) return { ok: false, reason: `login ${login.op.operationId} set no cookie` };
      if (named && cookies[named]) obtained.push({ value: cookies[named], variable, origin: origin(`the ${named} cookie`) });
      return {
        ok: true,
        apply: (p) => void Object.assign(p.cookies, cookies),
        wrong: (p) => void (p.cookies[scheme.name] = 'conformance-not-a-session'),
      };
    }
    const value = getAtPointer(res.body, how.take.bodyPointer ?? '');
    if (typeof value !== 'string' || value === '')
      return { ok: false, reason: `login ${login.op.operationId} gave no value at ${how.take.bodyPointer}` };
    obtained.push({ value, variable, origin: origin(`the value at ${how.take.bodyPointer ?? '(root)'}`) });
    const place = (p: RequestParts, v: string) => {
      if (scheme.in === 'header') p.headers[String(scheme.name).toLowerCase()] = v;
      else if (scheme.in === 'query') p.query[scheme.name] = v;
      else p.cookies[scheme.name] = v;
    };
    return { ok: true, apply: (p) => place(p, value), wrong: (p) => place(p, 'conformance-not-a-token') };
  }

  return {
    /** Every secret sent so far (credentials, what logins gave), each with the shell variable printed instead. */
    secrets: (): Secret[] => [...credentialSecrets(), ...obtained],
    /** What each cookie login set (for the hints: a login that never sets the session cookie). */
    loginNotes: (): readonly LoginNote[] => notes,
    /** Whether the operation can be called without any credential. */
    isOpen(target: SpecOperation): boolean {
      const requirements = requirementsOf(target);
      return requirements.length === 0 || requirements.some((r) => Object.keys(r).length === 0);
    },
    async plan(target: SpecOperation): Promise<AuthPlan> {
      if (this.isOpen(target)) return { kind: 'none' };
      const reasons: string[] = [];
      let notImplemented = false;
      for (const requirement of requirementsOf(target)) {
        const values = await Promise.all(Object.keys(requirement).map((name) => schemeValue(target, name)));
        const missing = values.find((v): v is Extract<SchemeValue, { ok: false }> => !v.ok);
        if (missing) {
          reasons.push(missing.reason);
          notImplemented ||= !!missing.notImplemented;
          continue;
        }
        const ready = values as Extract<SchemeValue, { ok: true }>[];
        const wrongs = ready.map((v) => v.wrong).filter((w) => w !== undefined);
        return {
          kind: 'ready',
          apply: (parts) => {
            for (const v of ready) v.apply(parts);
          },
          wrong:
            wrongs.length > 0
              ? (parts) => {
                  for (const w of wrongs) w(parts);
                }
              : undefined,
        };
      }
      return { kind: 'unavailable', reason: [...new Set(reasons)].join('; '), notImplemented };
    },
  };
}

export type Authenticator = ReturnType<typeof createAuthenticator>;

/** The operation's security alternatives (its own `security`, else the document's). */
const requirementsOf = (target: SpecOperation): Record<string, unknown>[] =>
  (target.op.operation.security ?? (target.spec.document as Json).security ?? []) as Record<string, unknown>[];

/** The credentials (auth.yaml names) the operation's security schemes send; none when it can be called without. */
export function credentialNames(target: SpecOperation, data: Pick<AuthData, 'schemes'>): string[] {
  const requirements = requirementsOf(target);
  if (requirements.length === 0 || requirements.some((r) => Object.keys(r).length === 0)) return [];
  const names = requirements.flatMap((r) =>
    Object.keys(r)
      .map((scheme) => data.schemes[scheme]?.credential)
      .filter((c) => c !== undefined),
  );
  return [...new Set(names)];
}

/** `name=value` of every Set-Cookie header (attributes dropped). */
export function setCookies(header: string | string[] | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const line of header === undefined ? [] : Array.isArray(header) ? header : [header]) {
    const pair = line.split(';')[0]!;
    const eq = pair.indexOf('=');
    if (eq > 0) cookies[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return cookies;
}

/**
 * The shell variable of each credential of auth.yaml: the environment variable it was read from, else
 * (a credential given another way, e.g. the reference system this run started) the last one auth.yaml
 * names (`PORTOLAN_ADMIN_PASSWORD`). The user's only when it came from one (a user name is printed).
 *
 * @example credentialVariables(loadAuthData(), { CONFORMANCE_ADMIN_PASSWORD: 'x' }).admin // { password: 'CONFORMANCE_ADMIN_PASSWORD' }
 */
export function credentialVariables(data: AuthData, env: Record<string, string | undefined>): CredentialVariables {
  const set = (names: readonly string[]) => names.find((n) => env[n] !== undefined && env[n] !== '');
  return Object.fromEntries(
    Object.entries(data.credentials).map(([name, source]) => {
      const user = set(source.user.env);
      const password = set(source.password.env) ?? source.password.env.at(-1) ?? `${name.toUpperCase()}_PASSWORD`;
      return [name, { ...(user ? { user } : {}), password }];
    }),
  );
}

/** Credentials from auth.yaml's environment variables, then the given overrides. */
export function credentialsFrom(
  data: AuthData,
  env: Record<string, string | undefined>,
  overrides: Record<string, Credential | undefined> = {},
): Record<string, Credential | undefined> {
  const found: Record<string, Credential | undefined> = {};
  for (const [name, source] of Object.entries(data.credentials)) {
    const user = fromEnv(source.user, env);
    const password = fromEnv(source.password, env);
    found[name] = user !== undefined && password !== undefined ? { user, password } : undefined;
  }
  for (const [name, value] of Object.entries(overrides)) if (value) found[name] = value;
  return found;
}
