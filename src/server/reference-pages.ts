// The API reference every role serves beside its interfaces (not part of any contract, like /metrics):
//   GET /openapi/<name>.yaml|.json  each spec the role serves, its `servers` pointing at the role itself;
//   GET /docs                       Swagger UI over this role's operations (a selector when there are
//                                   several specs), with every role's URL (the ports in use) and how to
//                                   authorize "Try it out";
//   GET /docs/spec/<name>.json      what the page shows of a spec: the operations this role serves;
//   GET /docs/<file>                Swagger UI's own files from the installed swagger-ui-dist, and the
//                                   page's init script: no inline script and no CDN, so the page carries
//                                   a strict Content-Security-Policy.
// The page's requests carry no browser credentials (Swagger UI's request interceptor sets the Fetch
// credentials mode to 'omit'), so a 401 with `WWW-Authenticate: Basic` shows on the page as an answer and
// never opens the browser's own login prompt; a spec whose scheme is a session cookie keeps 'same-origin'.
// HEAD works wherever GET does; answers carry ETags (conditional GET gives 304) and are gzipped when
// accepted. /docs/ redirects to /docs; anything else under /docs/ or /openapi/ is a 404, other methods a 405.
import type { Logger } from '../lib/logger.ts';
import { representation, representationAnswer, type Representation } from './reference-representation.ts';
import {
  renderSpec,
  servedDocument,
  type ReferenceSpec,
  type RegistrationTarget,
  type ServeContext,
  type SpecFormat,
  type SpecView,
} from './reference-specs.ts';
import { authorizationSection, escapeHtml, usedSchemes, usesCookieSession, type AuthorizationFacts } from './reference-authorize.ts';
import type { Stage, StagedRequest, StageResponse } from './stages.ts';
import { sharedSwaggerUiAssets, SWAGGER_UI_VERSION, type SwaggerUiAssets } from './swagger-ui-assets.ts';

export type { ReferenceSpec } from './reference-specs.ts';

export type ReferencePagesOptions = {
  role: string;
  /** The specs the role serves, in the order the page's selector lists them. */
  specs: readonly ReferenceSpec[];
  /** Where every role listens (its port; undefined or 0 when unknown), for the links between the pages. */
  rolePorts?: () => Readonly<Record<string, number | undefined>>;
  /** The Swagger UI files (default: the one cache of the process, shared by every role; tests pass their own). */
  assets?: SwaggerUiAssets;
  /** What the page says about the system's accounts (the administrative user's name; never a password). */
  authorization?: AuthorizationFacts;
  /** Gateway only: where client registration is answered (read per request: a derived host knows its port once listening). */
  registration?: () => RegistrationTarget;
};

export type ReferencePages = {
  /** Whether a request target is one of the reference pages' (/docs, /docs/..., /openapi/...). */
  claims(url: string): boolean;
  /** The answer to a claimed request (the adapter writes it). */
  answer(request: PageRequest): Promise<StageResponse>;
};

/**
 * What the page allows: its own origin only, plus what Swagger UI really needs: inline styles (React
 * sets `style` attributes) and `data:` images (its CSS icons). No inline script, no eval, no framing.
 * `connect` adds origins the page's "Try it out" may call (the gateway's: the registration host).
 *
 * @example
 * referencePageCsp(['http://localhost:8080']) // "... connect-src 'self' http://localhost:8080; ..."
 */
export function referencePageCsp(connect: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    ["connect-src 'self'", ...connect].join(' '),
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy of every answer but the gateway's page (which may also call the registration host). */
export const REFERENCE_PAGE_CSP = referencePageCsp();

/** What of a request the pages read: never its body. */
export type PageRequest = Pick<StagedRequest, 'method' | 'url' | 'headers' | 'localAddress'>;

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': REFERENCE_PAGE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * Starts Swagger UI on the specs the page lists in `data-urls` (a file of its own: the CSP forbids inline
 * script). Its request interceptor sends every request without browser credentials: by the Fetch
 * standard the browser prompts for a password only when a request includes credentials, so a 401 with a
 * Basic challenge is shown on the page instead of opening the browser's login dialog (Authorize sets the
 * Authorization header itself). Specs listed in `data-cookie-specs` keep 'same-origin': their session is
 * a cookie the browser keeps, and none of their operations answers a Basic challenge.
 */
const INIT_SCRIPT = `// Portolan reference page: starts Swagger UI on the specs the page lists in data-urls.
window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  var cookieSpecs = JSON.parse(root.dataset.cookieSpecs);
  window.ui = SwaggerUIBundle({
    urls: JSON.parse(root.dataset.urls),
    'urls.primaryName': root.dataset.primary,
    dom_id: '#swagger-ui',
    deepLinking: true,
    displayOperationId: true,
    validatorUrl: null,
    requestInterceptor: function (request) {
      var spec = window.ui ? window.ui.specSelectors.url() : '';
      request.credentials = cookieSpecs.indexOf(spec) === -1 ? 'omit' : 'same-origin';
      return request;
    },
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout'
  });
});
`;

const PAGE_CSS = `.portolan-roles { font-family: sans-serif; font-size: 14px; padding: 8px 20px; background: #1b1b1b; color: #fff; }
.portolan-roles a { color: #89bf04; }
.portolan-roles strong { margin-right: 16px; }
.portolan-roles .role { margin-right: 16px; white-space: nowrap; }
.portolan-roles code { color: #ddd; }
.portolan-note { font-family: sans-serif; font-size: 14px; padding: 8px 20px; background: #f3f6e8; border-bottom: 1px solid #d8dcc8; }
.portolan-note ul { margin: 4px 0 0; padding-left: 20px; }
`;

const OWN_FILES: Readonly<Record<string, Representation>> = {
  'init.js': representation(INIT_SCRIPT, 'text/javascript; charset=utf-8', 'no-cache'),
  'portolan.css': representation(PAGE_CSS, 'text/css; charset=utf-8', 'no-cache'),
};

/** The reference pages of one role. */
export function createReferencePages(options: ReferencePagesOptions): ReferencePages {
  const assets = options.assets ?? sharedSwaggerUiAssets();
  const specs = new Map(options.specs.map((spec) => [spec.name, spec]));
  // What the served specs reflect of the running system: read per request, fixed once every role listens.
  const context = (): ServeContext => ({ ports: options.rolePorts?.() ?? {}, registration: options.registration?.() });
  // Each spec is rendered on its first request, once per view, format and context (concurrent first requests share it).
  const rendered = new Map<string, Promise<Representation>>();
  const specRepresentation = (name: string, format: SpecFormat, view: SpecView): Promise<Representation> | undefined => {
    const spec = specs.get(name);
    if (!spec) return undefined;
    const now = context();
    const key = `${view}.${name}.${format}.${JSON.stringify(now)}`;
    let rep = rendered.get(key);
    if (!rep) {
      rendered.set(key, (rep = renderSpec(spec, options.role, format, now, view)));
      rep.catch(() => rendered.delete(key));
    }
    return rep;
  };
  // The page's "How to authorize", from the schemes of the operations it shows: made once per context.
  const noteByContext = new Map<string, string>();
  const authorizationNote = (now: ServeContext): string => {
    if (!options.authorization) return '';
    const key = JSON.stringify(now);
    let note = noteByContext.get(key);
    if (note === undefined) {
      const views = options.specs.map((spec) => servedDocument(spec.document, options.role, now, 'page'));
      const registration = now.registration;
      const registers = registration && registrationOrigin(registration) && views.some((view) => view.paths[registration.path]?.post);
      note = authorizationSection(
        usedSchemes(views),
        options.authorization,
        registers ? { host: registration.host, path: registration.path } : undefined,
      );
      noteByContext.set(key, note);
    }
    return note;
  };
  // The gateway's page may call the registration host (another origin than the page's).
  const pageHeaders = (): Readonly<Record<string, string>> => {
    const origin = registrationOrigin(options.registration?.());
    return origin ? { ...SECURITY_HEADERS, 'content-security-policy': referencePageCsp([origin]) } : SECURITY_HEADERS;
  };

  async function answer(request: PageRequest): Promise<StageResponse> {
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return plain(405, 'Only GET and HEAD are allowed here.', { allow: 'GET, HEAD' });
    const path = pathOf(request.url);
    if (path === '/docs')
      return representationAnswer(request, page(options, context(), authorizationNote, hostnameOf(request)), pageHeaders());
    if (path === '/docs/') return plain(301, 'See /docs.', { location: '/docs' });
    const pageSpec = /^\/docs\/spec\/([a-z0-9-]+)\.json$/.exec(path);
    if (pageSpec) {
      const rep = await specRepresentation(pageSpec[1]!, 'json', 'page');
      if (rep) return representationAnswer(request, rep, SECURITY_HEADERS);
    } else if (path.startsWith('/docs/')) {
      const name = path.slice('/docs/'.length);
      const own = Object.hasOwn(OWN_FILES, name) ? OWN_FILES[name] : undefined;
      const rep = own ?? (await assets.get(name));
      if (rep) return representationAnswer(request, rep, SECURITY_HEADERS);
    } else {
      const match = /^\/openapi\/([a-z0-9-]+)\.(yaml|json)$/.exec(path);
      const rep = match ? await specRepresentation(match[1]!, match[2] as SpecFormat, 'file') : undefined;
      if (rep) return representationAnswer(request, rep, { ...SECURITY_HEADERS, 'access-control-allow-origin': '*' });
    }
    return plain(404, 'Not found.');
  }

  return {
    claims: (url) => {
      const path = pathOf(url);
      return path === '/docs' || path.startsWith('/docs/') || path.startsWith('/openapi/');
    },
    answer,
  };
}

/** `http://<registration host>` when it is a plain `host[:port]` (a CSP source and a server URL), else undefined. */
function registrationOrigin(registration: RegistrationTarget | undefined): string | undefined {
  if (!registration) return undefined;
  const url = URL.parse(`http://${registration.host}`);
  return url !== null && url.host === registration.host.toLowerCase() && url.pathname === '/' ? `http://${url.host}` : undefined;
}

/**
 * The page: every role's URL (the ports in use; the others linked to their pages), how to authorize, then
 * Swagger UI over the page view of each spec (`data-urls`) and its init script.
 */
function page(
  options: ReferencePagesOptions,
  context: ServeContext,
  notes: (context: ServeContext) => string,
  hostname: string,
): Representation {
  const v = `?v=${encodeURIComponent(SWAGGER_UI_VERSION)}`;
  const urls = options.specs.map((spec) => ({
    url: `/docs/spec/${spec.name}.json`,
    name: `${spec.document.info.title} (${spec.name})`,
  }));
  const cookieSpecs = options.specs.filter((spec) => usesCookieSession(spec.document)).map((spec) => `/docs/spec/${spec.name}.json`);
  const ports = context.ports ?? {};
  const roles = Object.entries(ports)
    .filter(([role, port]) => role === options.role || port)
    .map(([role, port]) => {
      const url = port ? `http://${hostname}:${port}` : undefined;
      const shown = url ? ` <code>${escapeHtml(url)}</code>` : '';
      if (role === options.role) return `<span class="role" aria-current="page"><b>${escapeHtml(role)}</b>${shown}</span>`;
      return `<span class="role"><a href="${escapeHtml(`${url}/docs`)}">${escapeHtml(role)}</a>${shown}</span>`;
    });
  const note = notes(context);
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Portolan ${escapeHtml(options.role)} role: API reference</title>
<link rel="stylesheet" href="/docs/swagger-ui.css${v}">
<link rel="stylesheet" href="/docs/index.css${v}">
<link rel="stylesheet" href="/docs/portolan.css">
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png${v}" sizes="32x32">
<link rel="icon" type="image/png" href="/docs/favicon-16x16.png${v}" sizes="16x16">
</head>
<body>
<nav class="portolan-roles" aria-label="Reference pages of the roles"><strong>Portolan ${escapeHtml(options.role)} role</strong>Roles: ${roles.join(' ')}</nav>
${note}
<div id="swagger-ui" data-urls="${escapeHtml(JSON.stringify(urls))}" data-primary="${escapeHtml(urls[0]?.name ?? '')}" data-cookie-specs="${escapeHtml(JSON.stringify(cookieSpecs))}"></div>
<script src="/docs/swagger-ui-bundle.js${v}"></script>
<script src="/docs/swagger-ui-standalone-preset.js${v}"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
  return representation(html, 'text/html; charset=utf-8', 'no-cache');
}

/**
 * The reference pages as the stage the adapter runs before the role's own (src/server/http-adapter.ts):
 * it answers the paths the pages claim and passes on the rest. Its answers are not counted in the request
 * metrics, and are logged at debug with their path.
 */
export function referencePagesStage(pages: ReferencePages, logger: Logger): Stage {
  const answer = async (request: Parameters<Stage>[0]): Promise<StageResponse> => {
    const path = pathOf(request.url);
    const page = path.length > 200 ? `${path.slice(0, 200)}…` : path;
    const response = await pages.answer(request).catch((error: unknown): StageResponse => {
      logger.error({ err: error, requestId: request.requestId }, 'reference page could not be answered');
      return { status: 500 };
    });
    // No page reads a request body: one that comes with a body closes its connection after the answer, so
    // a client sending gigabytes to /docs is not kept alive (the adapter reads and drops the rest for its
    // linger time at most, then closes).
    const withBody = request.headers['transfer-encoding'] !== undefined || Number(request.headers['content-length'] ?? 0) > 0;
    const headers = withBody ? { ...response.headers, connection: 'close' } : response.headers;
    return { ...response, ...(headers ? { headers } : {}), aside: 'debug', log: { page } };
  };
  // Every other request passes on synchronously (no promise, no turn of the microtask queue).
  return (request) => (pages.claims(request.url) ? answer(request) : undefined);
}

/** The host name the client used to reach this role (links to the other roles keep it, with their ports). */
function hostnameOf(request: PageRequest): string {
  try {
    if (request.headers.host) return new URL(`http://${request.headers.host}`).hostname;
  } catch {
    // A Host header that is no host: fall back to the address the connection came in on.
  }
  const local = request.localAddress ?? '127.0.0.1';
  return local.includes(':') ? `[${local}]` : local;
}

function pathOf(url: string): string {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** A short text answer (on HEAD, node:http sends its head only). */
function plain(status: number, text: string, headers: Readonly<Record<string, string>> = {}): StageResponse {
  return {
    status,
    headers: { ...SECURITY_HEADERS, ...headers, 'cache-control': 'no-store' },
    contentType: 'text/plain; charset=utf-8',
    body: text,
  };
}
