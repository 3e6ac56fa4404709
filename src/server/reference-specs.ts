// The specs a role serves at /openapi/<name>.yaml and .json: each document as written, with only its
// `servers` changed so that Swagger UI's "Try it out" calls the role that served the page.
import { createRequire } from 'node:module';
import type { OpenApiDocument, ServerObject } from '../lib/spec-catalog.ts';
import { HTTP_METHODS } from '../lib/spec-catalog.ts';
import { compressedRepresentation, type Representation } from './reference-representation.ts';

// The YAML writer is loaded on the first YAML request: a role that starts never needs it (as in spec-catalog.ts).
const require = createRequire(import.meta.url);

/** A spec a role serves: its catalogue name (the URL's `<name>`) and the document as written. */
export type ReferenceSpec = { name: string; document: OpenApiDocument };

export type SpecFormat = 'yaml' | 'json';

/** Specs change only with a new release of the role: browsers revalidate them (cheap, with the ETag). */
const REVALIDATE = 'no-cache';

/**
 * The document as `role` serves it: every `servers` list (document, path item or operation level) that
 * names this role (`x-portolan-role`) becomes the relative `[{url: '/'}]`, so the browser calls the
 * origin it loaded the spec from, whatever host and port the role listens on; a list that names only
 * other roles (an operation served elsewhere, like the gateway's `/gateway/pool` in the health spec of
 * another role) is left as written. The shared document is not changed.
 */
export function servedDocument(document: OpenApiDocument, role: string): OpenApiDocument {
  const served = structuredClone(document);
  const here = (servers: ServerObject[] | undefined) =>
    servers?.some((s) => s['x-portolan-role'] === role)
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
  return served;
}

/** Renders a spec for one role, in YAML or JSON, gzipped off the event loop (the caller keeps it: the document does not change). */
export function renderSpec(spec: ReferenceSpec, role: string, format: SpecFormat): Promise<Representation> {
  const document = servedDocument(spec.document, role);
  if (format === 'json') return compressedRepresentation(JSON.stringify(document), 'application/json; charset=utf-8', REVALIDATE);
  const { stringify } = require('yaml') as typeof import('yaml');
  return compressedRepresentation(stringify(document, { lineWidth: 0 }), 'application/yaml', REVALIDATE);
}
