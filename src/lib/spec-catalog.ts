import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { INTERFACES } from '../../generated/interfaces.gen.ts';

// The YAML parser is loaded on the first loadSpec: starting the server reads compiled contracts instead
// (src/server/compiled-contract.ts) and never needs it.
const require = createRequire(import.meta.url);

/**
 * The interfaces, one OpenAPI document each: the specs of specs/ as `npm run generate` last read them
 * (generated/interfaces.gen.ts, from readSpecCatalog below), so that the names are a type and nothing
 * parses YAML to know them. Adding an interface is its spec, its module folder and its line in
 * src/app/modules.ts; scripts/interface-catalog.test.ts says what else is missing.
 */
export { INTERFACES };

export type InterfaceName = (typeof INTERFACES)[number]['name'];

export const SPECS_DIR = fileURLToPath(new URL('../../specs/', import.meta.url));

/** Absolute path of an interface's OpenAPI document. */
export function specPath(name: InterfaceName): string {
  return `${SPECS_DIR}${name}.yaml`;
}

/** One interface as its spec names it: the file name, `info.x-interface`, `info.title`, `info.version`, and the file's path. */
export type CatalogEntry = { name: string; letter: string; title: string; version: string; path: string };

/** An interface's name is its spec's file name: a folder of generated/ and src/interfaces/, a package subpath. */
const NAME = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
const LETTER = /^[A-Z]$/;

/**
 * The catalog read from the specs themselves: every `*.yaml` of `dir` that is an OpenAPI document (other
 * YAML there, such as releases.yaml, is not an interface), sorted by letter; and one line per problem
 * (a name that cannot be a folder, a letter that is missing, not one capital or used twice).
 */
export function readSpecCatalog(dir = SPECS_DIR): { entries: CatalogEntry[]; problems: string[] } {
  const entries: CatalogEntry[] = [];
  const problems: string[] = [];
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  for (const file of files.sort()) {
    const read = readCatalogEntry(dir, file);
    if (typeof read === 'string') problems.push(read);
    else if (read) {
      entries.push(read);
      problems.push(...entryProblems(read, file));
    }
  }
  problems.push(...duplicateLetters(entries));
  entries.sort((a, b) => a.letter.localeCompare(b.letter) || a.name.localeCompare(b.name));
  return { entries, problems };
}

/** One file's entry; undefined when it is YAML but no OpenAPI document, a problem line when it is not YAML. */
function readCatalogEntry(dir: string, file: string): CatalogEntry | string | undefined {
  const { parse } = require('yaml') as typeof import('yaml');
  let doc: unknown;
  try {
    doc = parse(readFileSync(join(dir, file), 'utf8'));
  } catch (error) {
    return `specs/${file}: not YAML (${(error as Error).message.split('\n')[0]}): \`npm run lint:specs\` says where`;
  }
  if (typeof doc !== 'object' || doc === null || !('openapi' in doc)) return undefined;
  const info = ('info' in doc && typeof doc.info === 'object' && doc.info !== null ? doc.info : {}) as Record<string, unknown>;
  return {
    name: file.slice(0, -'.yaml'.length),
    letter: String(info['x-interface'] ?? ''),
    title: String(info.title ?? ''),
    version: String(info.version ?? ''),
    path: join(dir, file),
  };
}

function entryProblems(entry: CatalogEntry, file: string): string[] {
  const problems: string[] = [];
  if (!NAME.test(entry.name))
    problems.push(`specs/${file}: rename it to lower-case words joined by '-' (the name becomes a folder and a package subpath)`);
  if (!LETTER.test(entry.letter)) problems.push(`specs/${file}: info.x-interface must be one capital letter A-Z (found '${entry.letter}')`);
  return problems;
}

function duplicateLetters(entries: readonly CatalogEntry[]): string[] {
  const used = new Set(entries.map((e) => e.letter));
  const free = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZ'].filter((l) => !used.has(l));
  const suggestion = free.length === 0 ? 'none is left' : `${free.slice(0, 2).join(', ')}${free.length > 2 ? ', ...' : ''}`;
  return [...used]
    .filter((letter) => LETTER.test(letter))
    .map((letter) => entries.filter((e) => e.letter === letter))
    .filter((same) => same.length > 1)
    .map(
      (same) =>
        `${same.map((e) => `specs/${e.name}.yaml`).join(' and ')}: the same info.x-interface '${same[0]!.letter}'; give all but one an unused letter (${suggestion})`,
    );
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
