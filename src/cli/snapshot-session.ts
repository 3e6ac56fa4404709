// `portolan snapshot`'s session with the snapshot diagnostics API (C): its settings from the environment,
// the login at the login role (credentials never from the command line), and the one-line failures every
// command shares (a role that does not answer, a status a command does not expect).
import { createClient, type Client } from '../../generated/snapshots/client/index.ts';
import { loginDiagnosticsUser } from '../../generated/snapshots/sdk.gen.ts';

export const EXIT = { ok: 0, failed: 1, usage: 2, stillProcessing: 3 } as const;
export const DEFAULTS = {
  diagnosticsUrl: 'http://127.0.0.1:8300',
  loginUrl: 'http://127.0.0.1:8301',
  intervalSeconds: 2,
  maxPolls: 150,
} as const;

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

export type SnapshotSettings = { diagnosticsUrl: string; loginUrl: string; user: string; password: string; credentialVars: string };

/** Decodes the client's settings from the environment, or says which variable to set or fix. */
export function snapshotSettings(env: Record<string, string | undefined>): { ok: true; settings: SnapshotSettings } | Failure {
  const value = (name: string) => (env[name] === '' ? undefined : env[name]);
  const urls: Record<string, string> = {};
  for (const [key, name, fallback] of [
    ['diagnosticsUrl', 'PORTOLAN_DIAGNOSTICS_URL', DEFAULTS.diagnosticsUrl],
    ['loginUrl', 'PORTOLAN_LOGIN_URL', DEFAULTS.loginUrl],
  ] as const) {
    const raw = value(name) ?? fallback;
    const url = URL.canParse(raw) ? new URL(raw) : undefined;
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return failure(`${name} must be an http or https URL`, EXIT.usage);
    if (url.username || url.password)
      return failure(
        `${name} must not hold a user or password: set PORTOLAN_DIAGNOSTICS_USER and PORTOLAN_DIAGNOSTICS_PASSWORD`,
        EXIT.usage,
      );
    urls[key] = url.href.replace(/\/+$/, '');
  }
  const diagnostics = { user: value('PORTOLAN_DIAGNOSTICS_USER'), password: value('PORTOLAN_DIAGNOSTICS_PASSWORD') };
  let credentials: { user: string | undefined; password: string | undefined; vars: string };
  if (diagnostics.user !== undefined || diagnostics.password !== undefined) {
    credentials = { ...diagnostics, vars: 'PORTOLAN_DIAGNOSTICS_USER / PORTOLAN_DIAGNOSTICS_PASSWORD' };
  } else {
    // The reference system's administrative account may use the diagnostics API too (DESIGN.md, "Accounts").
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
  return {
    ok: true,
    settings: {
      diagnosticsUrl: urls.diagnosticsUrl!,
      loginUrl: urls.loginUrl!,
      user: credentials.user,
      password: credentials.password,
      credentialVars: credentials.vars,
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
  if (!result.response) return noAnswer(what, settings.diagnosticsUrl, 'diagnostics', 'PORTOLAN_DIAGNOSTICS_URL', result.error);
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
  if (!result.response) return noAnswer('login', settings.loginUrl, 'login', 'PORTOLAN_LOGIN_URL', result.error);
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
    `login failed: ${shown(settings.loginUrl)} answered ${status}${message ? `: ${message}` : ''}; is PORTOLAN_LOGIN_URL the login role?`,
    EXIT.failed,
    status,
  );
}
