// What the reference-page tests expect, read from the spec files themselves (not from the server): which
// specs each role serves, and a document with its `servers` taken out, to compare served specs with files.
import { INTERFACES, listOperations, loadSpec, type InterfaceName, type OpenApiDocument } from '../lib/spec-catalog.ts';
import { HTTP_METHODS } from '../lib/spec-catalog.ts';

/** The catalogue specs with at least one operation served on `role`, parsed from their files. */
export function specsOfRole(role: string): { name: InterfaceName; document: OpenApiDocument }[] {
  return INTERFACES.map(({ name }) => ({ name, document: loadSpec(name) })).filter(({ document }) =>
    listOperations(document).some((op) => op.roles.includes(role)),
  );
}

/** The document without any `servers` list (document, path item and operation level). */
export function withoutServers(document: OpenApiDocument): OpenApiDocument {
  const copy = structuredClone(document);
  delete copy.servers;
  for (const item of Object.values(copy.paths ?? {})) {
    delete item.servers;
    for (const method of HTTP_METHODS) delete (item[method] as { servers?: unknown } | undefined)?.servers;
  }
  return copy;
}

/** `METHOD /path` of every operation of a document, sorted. */
export function operationKeys(document: OpenApiDocument): string[] {
  return listOperations(document)
    .map((op) => `${op.method.toUpperCase()} ${op.path}`)
    .sort();
}
