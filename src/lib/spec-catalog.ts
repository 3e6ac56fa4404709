import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// The YAML parser is loaded on the first loadSpec: starting the server reads compiled contracts instead
// (src/server/compiled-contract.ts) and never needs it.
const require = createRequire(import.meta.url);

/** The eight interfaces of the seed, one OpenAPI document each. */
export const INTERFACES = [
  { name: 'mapping', letter: 'A', title: 'Expedition mapping API' },
  { name: 'topology', letter: 'B', title: 'Topology configuration API' },
  { name: 'snapshots', letter: 'C', title: 'Snapshot diagnostics API' },
  { name: 'client-registration', letter: 'D', title: 'OAuth client self-registration' },
  { name: 'rate-limit', letter: 'E', title: 'Access-token rate limiting' },
  { name: 'device-config', letter: 'F', title: 'Device configuration REST and declarative deployment' },
  { name: 'health', letter: 'G', title: 'Health endpoint convention' },
  { name: 'access-session', letter: 'H', title: 'OAuth client session conventions' },
] as const;

export type InterfaceName = (typeof INTERFACES)[number]['name'];

export const SPECS_DIR = fileURLToPath(new URL('../../specs/', import.meta.url));

/** Absolute path of an interface's OpenAPI document. */
export function specPath(name: InterfaceName): string {
  return `${SPECS_DIR}${name}.yaml`;
}

/** A parsed OpenAPI document, kept loosely typed: it is walked generically. */
export type OpenApiDocument = {
  openapi: string;
  info: Record<string, unknown> & { title: string; version: string };
  servers?: ServerObject[];
  paths: Record<string, PathItem>;
  components?: Record<string, Record<string, unknown>>;
  [extension: `x-${string}`]: unknown;
};
export type ServerObject = { url: string; description?: string; 'x-portolan-role'?: string };
export type PathItem = Record<string, unknown> & { servers?: ServerObject[] };

/** Reads and parses one spec from disk (no $ref resolution). */
export function loadSpec(name: InterfaceName): OpenApiDocument {
  const { parse } = require('yaml') as typeof import('yaml');
  return parse(readFileSync(specPath(name), 'utf8')) as OpenApiDocument;
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export type OperationEntry = {
  operationId: string;
  method: HttpMethod;
  path: string;
  operation: Record<string, unknown>;
  /** Roles this operation is served on (servers in effect: path level, else document level). */
  roles: string[];
};

/** Every operation of a document with the roles it is served on. */
export function listOperations(doc: OpenApiDocument): OperationEntry[] {
  const entries: OperationEntry[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item[method] as Record<string, unknown> | undefined;
      if (!operation) continue;
      const servers = (operation.servers as ServerObject[] | undefined) ?? item.servers ?? doc.servers ?? [];
      const roles = [...new Set(servers.map((s) => s['x-portolan-role']).filter((r): r is string => !!r))];
      entries.push({ operationId: String(operation.operationId), method, path, operation, roles });
    }
  }
  return entries;
}
