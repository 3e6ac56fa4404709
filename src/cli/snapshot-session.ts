// `portolan snapshot`'s session with the snapshot diagnostics API (C): where its two roles are (the settings of
// `portolan start`, a running system's role map, or explicit URLs), the login at the login role (credentials
// from the environment, never from the command line), and the one-line failures every command shares (a
// role that does not answer, a status a command does not expect).
import { createClient, type Client } from '../../generated/snapshots/client/index.ts';
import { loginDiagnosticsUser } from '../../generated/snapshots/sdk.gen.ts';
import { ConfigError } from '../lib/config.ts';
import { discoverRoles, roleUrlsFromSettings } from '../lib/role-urls.ts';

export const EXIT = { ok: 0, failed: 1, usage: 2, stillProcessing: 3 } as const;
export const DEFAULTS = { intervalSeconds: 2, maxPolls: 150 } as const;

const JSON_TYPE = 'application/vnd.vendor.diagnostics.api+json';
export const SNAPSHOT_ID = /^[A-Za-z0-9_-]{1,64}$/;
// Connection failures that mean "nothing answers there", as opposed to a connection that broke midway.
const UNREACHABLE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** An expected failure: the one line to print, the exit code, and the HTTP status when a role answered one. */
export type Failure = { ok: false; code: number; message: string; status?: number };
export const failure = (message: string, code: number = EXIT.failed, status?: number): Failure => ({
  ok: false,
  code,
  message,
  ...(status === undefined ? {} : { status }),
});

export type SnapshotSettings = {
  diagnosticsUrl: string;
  loginUrl: string;
  user: string;
  password: string;
  credentialVars: string;
  /** Where each URL came from, named in the failures (default: PORTOLAN_DIAGNOSTICS_URL, PORTOLAN_LOGIN_URL). */
  sources?: { diagnostics: string; login: string };
};

/** The two roles the client talks to, the explicit URL setting of each, and the port setting of `portolan start`. */
const ROLES = [
  { role: 'diagnostics', key: 'diagnosticsUrl', urlVar: 'PORTOLAN_DIAGNOSTICS_URL', portVar: 'PORTOLAN_DIAGNOSTICS_PORT' },
  { role: 'login', key: 'loginUrl', urlVar: 'PORTOLAN_LOGIN_URL', portVar: 'PORTOLAN_LOGIN_PORT' },
] as const;

type Found = { url: string; source: string };

/** The credentials from the environment, or which variables to set. */
function credentialsOf(env: Record<string, string | undefined>): { user: string; password: string; vars: string } | Failure {
  const value = (name: string) => (env[name] === '' ? undefined : env[name]);
  const diagnostics = { user: value('PORTOLAN_DIAGNOSTICS_USER'), password: value('PORTOLAN_DIAGNOSTICS_PASSWORD') };
  let credentials: { user: string | undefined; password: string | undefined; vars: string };
  if (diagnostics.user !== undefined || diagnostics.password !== undefined) {
    credentials = { ...diagnostics, vars: 'PORTOLAN_DIAGNOSTICS_USER / PORTOLAN_DIAGNOSTICS_PASSWORD' };
  } else {
    // The reference system's administrative account may use the diagnostics API too.
    credentials = {
      user: value('PORTOLAN_ADMIN_USER') ?? 'admin',
      password: value('PORTOLAN_ADMIN_PASSWORD'),
      vars: 'PORTOLAN_ADMIN_USER / PORTOLAN_ADMIN_PASSWORD',
    };
    if (credentials.password === undefined) {
      return failure(
        'missing credentials: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD (or PORTOLAN_ADMIN_PASSWORD)',
        EXIT.usage,
      );
    }
  }
  if (credentials.user === undefined || credentials.password === undefined) {
    return failure(`missing credentials: set both ${credentials.vars}`, EXIT.usage);
  }
  return { user: credentials.user, password: credentials.password, vars: credentials.vars };
}

/** An explicit URL setting, checked: http or https, no user or password in it. */
function explicitUrl(name: string, raw: string): Found | Failure {
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return failure(`${name} must be an http or https URL`, EXIT.usage);
  if (url.username || url.password)
    return failure(`${name} must not hold a user or password: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD`, EXIT.usage);
  return { url: url.href.replace(/\/+$/, ''), source: name };
}

/** The URLs of the roles not set explicitly: from the role map of `target`, else from the settings of `portolan start`. */
async function foundUrls(
  env: Record<string, string | undefined>,
  target: string | undefined,
  fetcher: typeof fetch,
): Promise<Record<'diagnostics' | 'login', Found | Failure>> {
  if (target !== undefined) {
    const found = await discoverRoles(target, fetcher);
    const source = `the role map of ${URL.canParse(target) ? new URL(target).origin : target}`;
    const of = (role: (typeof ROLES)[number]): Found | Failure => {
      if (!found.ok) return failure(`--target: ${found.error}`);
      const url = found.value.urls[role.role];
      return url === undefined
        ? failure(`${source} lists no ${role.role} role: give the URL of a system that runs it, or set ${role.urlVar}`)
        : { url, source };
    };
    return { diagnostics: of(ROLES[0]), login: of(ROLES[1]) };
  }
  let urls: ReturnType<typeof roleUrlsFromSettings>;
  try {
    urls = roleUrlsFromSettings(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    const problem = failure(`${error.problems.join('; ')} (the settings of portolan start, read to find the roles)`, EXIT.usage);
    return { diagnostics: problem, login: problem };
  }
  const of = (role: (typeof ROLES)[number]): Found | Failure => {
    const url = urls[role.role];
    return url === undefined
      ? failure(
          `${role.portVar} is 0 (a free port, known only once started): give --target <the URL of any role> or set ${role.urlVar}`,
          EXIT.usage,
        )
      : {
          url,
          source: `URL from PORTOLAN_HOST, PORTOLAN_PORT_OFFSET and ${role.portVar}, as portolan start reads them; or give --target <url>`,
        };
  };
  return { diagnostics: of(ROLES[0]), login: of(ROLES[1]) };
}

/**
 * The client's settings: credentials from the environment; each role's URL from its explicit setting
 * (PORTOLAN_DIAGNOSTICS_URL, PORTOLAN_LOGIN_URL) when set, else from the role map of `target` (any role's URL
 * of a running system), else from the settings `portolan start` reads. Or the one line saying what to set or fix.
 *
 * @example
 * const decoded = await snapshotSettings(process.env, { target: 'http://127.0.0.1:8080' });
 * if (decoded.ok) console.log(decoded.settings.diagnosticsUrl); // http://127.0.0.1:8300
 */
export async function snapshotSettings(
  env: Record<string, string | undefined>,
  options: { target?: string; fetch?: typeof fetch } = {},
): Promise<{ ok: true; settings: SnapshotSettings } | Failure> {
  const credentials = credentialsOf(env);
  if ('ok' in credentials) return credentials;
  const explicit = ROLES.map((role) => (env[role.urlVar] ? explicitUrl(role.urlVar, env[role.urlVar]!) : undefined));
  const refused = explicit.find((found): found is Failure => found !== undefined && 'ok' in found);
  if (refused) return refused;
  const needed = explicit.some((found) => found === undefined);
  const found = needed ? await foundUrls(env, options.target, options.fetch ?? fetch) : undefined;
  const [diagnostics, login] = ROLES.map((role, i) => (explicit[i] as Found | undefined) ?? found![role.role]);
  if ('ok' in diagnostics!) return diagnostics;
  if ('ok' in login!) return login;
  return {
    ok: true,
    settings: {
      diagnosticsUrl: diagnostics!.url,
      loginUrl: login!.url,
      user: credentials.user,
      password: credentials.password,
      credentialVars: credentials.vars,
      sources: { diagnostics: diagnostics!.source, login: login!.source },
    },
  };
}

/** A URL as it may be printed: without any user or password in it. */
function shown(url: string): string {
  const parsed = new URL(url);
  parsed.username = '';
  parsed.password = '';
  return parsed.href.replace(/\/$/, '');
}

/** One printable line: no control characters (no terminal escapes from a server), at most `max` characters. */
export function oneLine(text: string, max = 300): string {
  // eslint-disable-next-line no-control-regex
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 3)}...` : line;
}

/** The server's error message: `message` of a JSON error, of an XML `<error>` (answers to PDF/CSV requests), or the text. */
export function serverMessage(error: unknown): string {
  if (typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string')
    return oneLine((error as { message: string }).message);
  if (typeof error !== 'string') return '';
  const xml = /<message>([^<]*)<\/message>/.exec(error);
  if (!xml) return oneLine(error);
  const entities: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
  return oneLine(xml[1]!.replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => entities[name]!));
}

export function errorCode(error: unknown): string | undefined {
  for (let cause = error, depth = 0; cause && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
    const code = (cause as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

/** What a request that got no answer means, naming the setting to check. */
function noAnswer(what: string, url: string, role: string, variable: string, error: unknown): Failure {
  const code = errorCode(error);
  if (code === undefined || UNREACHABLE_CODES.has(code))
    return failure(`cannot reach ${shown(url)}${code ? ` (${code})` : ''}: is the ${role} role running? (${variable})`);
  return failure(`${what} failed: the connection to ${shown(url)} broke (${code})`);
}

/** A status the command does not expect: the status and the server's message. */
export function unexpected(what: string, response: Response, error: unknown): Failure {
  const message = serverMessage(error);
  const unimplemented = response.status === 501 ? ' (this system does not implement the diagnostics API yet)' : '';
  return failure(
    `${what} failed: the diagnostics role answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${message ? `: ${message}` : ''}${unimplemented}`,
    EXIT.failed,
    response.status,
  );
}

type SdkResult = { data?: unknown; error?: unknown; response?: Response };

/** The answer of one SDK call to the diagnostics role, or the failure when there was none. */
export function answer<R extends SdkResult>(
  result: R,
  what: string,
  settings: SnapshotSettings,
): (R & { ok: true; response: Response }) | Failure {
  if (!result.response)
    return noAnswer(
      what,
      settings.diagnosticsUrl,
      'diagnostics',
      settings.sources?.diagnostics ?? 'PORTOLAN_DIAGNOSTICS_URL',
      result.error,
    );
  return { ...result, ok: true, response: result.response };
}

export type SnapshotSession = { ok: true; api: Client; settings: SnapshotSettings };

/**
 * Logs in at the login role and answers an SDK client for the diagnostics role that sends the session
 * cookies. The cookies come on the login's 302 (redirects are not followed); the login succeeded only
 * when `sso_completed=1` is among them.
 *
 * @example
 * const session = await openSession(settings);
 * if (!session.ok) throw new Error(session.message);
 * await listSnapshots({ client: session.api });
 */
export async function openSession(settings: SnapshotSettings): Promise<SnapshotSession | Failure> {
  const login = createClient({ baseUrl: settings.loginUrl, headers: { Accept: JSON_TYPE } });
  const result = await loginDiagnosticsUser({
    client: login,
    body: { userid: settings.user, passwd: settings.password },
    redirect: 'manual',
    parseAs: 'text',
  });
  const loginSource = settings.sources?.login ?? 'PORTOLAN_LOGIN_URL';
  if (!result.response) return noAnswer('login', settings.loginUrl, 'login', loginSource, result.error);
  const { status } = result.response;
  const cookies = result.response.headers
    .getSetCookie()
    .map((cookie) => cookie.split(';', 1)[0]!.trim())
    .filter((pair) => pair.includes('='));
  if (status < 400 && cookies.includes('sso_completed=1')) {
    const api = createClient({ baseUrl: settings.diagnosticsUrl, headers: { Accept: JSON_TYPE, Cookie: cookies.join('; ') } });
    return { ok: true, api, settings };
  }
  // A redirect without the marker is how the real login page says no; 400, 401 and 403 refuse the form.
  if (status < 400 || status === 400 || status === 401 || status === 403)
    return failure(`login failed: check ${settings.credentialVars}`, EXIT.failed, status);
  const message = serverMessage(result.error);
  return failure(
    `login failed: ${shown(settings.loginUrl)} answered ${status}${message ? `: ${message}` : ''}; is it the login role? (${loginSource})`,
    EXIT.failed,
    status,
  );
}
