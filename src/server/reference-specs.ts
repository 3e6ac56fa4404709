// The specs a role serves, as its reference pages hand them out:
//   the file view (/openapi/<name>.yaml|.json): each document as written, its `servers` pointing at the
//     role that serves the operation;
//   the page view (what /docs shows): only the operations this role serves, so that every "Try it out"
//     calls this role (the others are named in the description, each on its own role's page).
// In both, the ports the text names are the ports the roles run on (a role moved from its default port
// is not shown at the default one), and on the gateway, client registration points at the registration
// host, the Host that registration is recognised by.
import { createRequire } from 'node:module';
import { ROLE_DEFINITIONS, type RoleName } from '../lib/roles.ts';
import type { OpenApiDocument, ServerObject } from '../lib/spec-catalog.ts';
import { HTTP_METHODS, listOperations } from '../lib/spec-catalog.ts';
import { compressedRepresentation, type Representation } from './reference-representation.ts';

// The YAML writer is loaded on the first YAML request: a role that starts never needs it (as in spec-catalog.ts).
const require = createRequire(import.meta.url);

/** A spec a role serves: its catalogue name (the URL's `<name>`) and the document as written. */
export type ReferenceSpec = { name: string; document: OpenApiDocument };

export type SpecFormat = 'yaml' | 'json';

/** The whole document (`file`, for download) or this role's operations only (`page`, what /docs shows). */
export type SpecView = 'file' | 'page';

/** Where client registration is answered: the Host it is recognised by, its configured path, the spec's path. */
export type RegistrationTarget = { host: string; path: string; operationPath: string };

/** What of the running system a served spec reflects. */
export type ServeContext = {
  /** Where each role listens (0 or undefined: unknown); a role's default port named in the text becomes its port. */
  ports?: Readonly<Record<string, number | undefined>>;
  /** On the gateway: where registration is answered (its operation is pointed there). */
  registration?: RegistrationTarget | undefined;
};

/** Specs change only with a new release of the role: browsers revalidate them (cheap, with the ETag). */
const REVALIDATE = 'no-cache';

/**
 * The document as `role` serves it (the shared document is not changed):
 * - every `servers` list (document, path item or operation level) that names this role (`x-portolan-role`)
 *   becomes the relative `[{url: '/'}]`, so the browser calls the origin it loaded the spec from; in the
 *   page view the operations served by other roles are left out and named in `info.description`;
 * - the default port of a role that runs elsewhere becomes its port wherever the text names it
 *   (`localhost:8100`, `port 8100`), extensions (`x-…`) aside;
 * - on the gateway, client registration is pointed at `http://<registration host>` at its configured path.
 *
 * @example
 * servedDocument(doc, 'device', { ports: { device: 9100 } }, 'page').servers // [{ url: '/', ... }]
 */
export function servedDocument(
  document: OpenApiDocument,
  role: string,
  context: ServeContext = {},
  view: SpecView = 'file',
): OpenApiDocument {
  const served = structuredClone(document);
  if (view === 'page') keepOperationsOf(served, role);
  // In the page view every operation left is served here.
  const here = (servers: ServerObject[] | undefined) =>
    servers && (view === 'page' || servers.some((s) => s['x-portolan-role'] === role))
      ? [{ url: '/', description: `This ${role} role (the one serving this document)` }]
      : servers;
  const replace = (holder: { servers?: ServerObject[] }) => {
    const servers = here(holder.servers);
    if (servers) holder.servers = servers;
  };
  replace(served);
  for (const item of Object.values(served.paths ?? {})) {
    replace(item);
    for (const method of HTTP_METHODS) {
      const operation = item[method] as { servers?: ServerObject[] } | undefined;
      if (operation) replace(operation);
    }
  }
  // The ports first: the registration host is the one in use already.
  const moved = movedPorts(served, context.ports ?? {});
  if (role === 'gateway' && context.registration) pointAtRegistrationHost(moved, context.registration);
  return moved;
}

/** The page view: only the operations served on `role`; the others are named at the end of the description. */
function keepOperationsOf(document: OpenApiDocument, role: string): void {
  const elsewhere = listOperations(document).filter((op) => !op.roles.includes(role));
  for (const op of elsewhere) {
    const item = document.paths[op.path]!;
    delete item[op.method];
    if (!HTTP_METHODS.some((method) => item[method])) delete document.paths[op.path];
  }
  if (elsewhere.length === 0) return;
  const lines = elsewhere.map((op) => `- \`${op.method.toUpperCase()} ${op.path}\`: the ${op.roles.join(' or ')} role`);
  const note = `### Served by other roles\nThese operations of this interface are on another role's reference page (linked at the top), where "Try it out" reaches them:\n\n${lines.join('\n')}\n`;
  const description = typeof document.info.description === 'string' ? document.info.description : '';
  document.info.description = description ? `${description.trimEnd()}\n\n${note}` : note;
}

/**
 * Client registration on the gateway: the gateway answers it only for requests whose Host is the
 * registration host, which a browser cannot set; the operation's server is therefore that host, and its
 * path the configured one. A host that is not a plain `host[:port]` is left out (the spec stays as written).
 */
function pointAtRegistrationHost(document: OpenApiDocument, registration: RegistrationTarget): void {
  const item = document.paths[registration.operationPath];
  const operation = item?.post as { servers?: ServerObject[] } | undefined;
  const url = URL.parse(`http://${registration.host}`);
  if (!item || !operation || url === null || url.host !== registration.host.toLowerCase() || url.pathname !== '/') return;
  operation.servers = [
    {
      url: `http://${url.host}`,
      description: `The registration host: the gateway answers registration only for requests whose Host is ${url.host}`,
    },
  ];
  if (registration.path !== registration.operationPath && !document.paths[registration.path]) {
    // The configured path, in the place of the spec's (the order of the paths kept).
    document.paths = Object.fromEntries(
      Object.entries(document.paths).map(([path, value]) => [path === registration.operationPath ? registration.path : path, value]),
    );
  }
}

const DEFAULT_PORTS = new Map<number, RoleName>(
  Object.entries(ROLE_DEFINITIONS).map(([role, definition]) => [definition.defaultPort, role as RoleName]),
);

/**
 * Every string of the document (extensions and patterns aside) with the default ports of the roles that
 * run elsewhere replaced by their ports, in one pass (so ports that trade places are not replaced twice):
 * `localhost:8100` (also `127.0.0.1:`, `[::1]:`, URL-encoded `%3A`) and `port 8100` (`port **8100**`;
 * " in the service description" after it goes, since it no longer holds).
 */
function movedPorts(document: OpenApiDocument, ports: Readonly<Record<string, number | undefined>>): OpenApiDocument {
  const moved = new Map<string, string>();
  for (const [port, role] of DEFAULT_PORTS) {
    const actual = ports[role];
    if (actual && actual !== port) moved.set(String(port), String(actual));
  }
  if (moved.size === 0) return document;
  const rewrite = (text: string) =>
    text
      .replace(
        /(?<=^|[^\w.-]|%2F)(localhost|127\.0\.0\.1|\[::1\])(:|%3A)(\d{2,5})\b/gi,
        (all, host: string, colon: string, port: string) => (moved.has(port) ? `${host}${colon}${moved.get(port)}` : all),
      )
      .replace(/\bport (\*\*)?(\d{2,5})(\*\*)?( in the (?:seed|service description))?/g, (all, open = '', port: string, close = '') =>
        moved.has(port) ? `port ${open}${moved.get(port)}${close}` : all,
      );
  const walk = (value: unknown): unknown => {
    if (typeof value === 'string') return rewrite(value);
    if (Array.isArray(value)) return value.map(walk);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, key.startsWith('x-') || key === 'pattern' ? inner : walk(inner)]),
    );
  };
  return walk(document) as OpenApiDocument;
}

/** Renders a spec for one role, in YAML or JSON, gzipped off the event loop (the caller keeps it while the context holds). */
export function renderSpec(
  spec: ReferenceSpec,
  role: string,
  format: SpecFormat,
  context: ServeContext = {},
  view: SpecView = 'file',
): Promise<Representation> {
  const document = servedDocument(spec.document, role, context, view);
  if (format === 'json') return compressedRepresentation(JSON.stringify(document), 'application/json; charset=utf-8', REVALIDATE);
  const { stringify } = require('yaml') as typeof import('yaml');
  return compressedRepresentation(stringify(document, { lineWidth: 0 }), 'application/yaml', REVALIDATE);
}
