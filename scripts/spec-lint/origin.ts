// The "designed without x-origin" rule: every operation, response status and request/response schema
// property must be traceable to the seed (a seed pointer from specs/README.md names it, or something
// inside it) or carry `x-origin: designed` on itself or on anything it is reached through (path item,
// operation, response, request body, schema, `$ref` target). A seed pointer naming a whole schema does not
// vouch for each property: the seed lists fields one by one, and a designed field added to a seed schema
// is exactly what this catches.
import { getAtPointer, isObject, resolveRef, toPointer } from '../../src/lib/contract/json-pointer.ts';
import { HTTP_METHODS } from '../../src/lib/spec-catalog.ts';
import type { Finding } from './findings.ts';

type Json = Record<string, unknown>;
type Element = { pointer: string; what: string; aliases: string[]; chain: string[] };

const SCHEMA_CHILDREN = ['allOf', 'oneOf', 'anyOf'] as const;

/** The node at `pointer` after following `$ref`s, with the pointers of the `$ref` targets passed. */
function follow(doc: Json, node: unknown, pointer: string): { node: Json | undefined; pointers: string[] } {
  const pointers = [pointer];
  let current = node;
  for (let hops = 0; isObject(current) && typeof current.$ref === 'string' && hops < 20; hops++) {
    pointers.push(current.$ref.replace(/^#/, ''));
    current = resolveRef(doc, { $ref: current.$ref });
  }
  return { node: isObject(current) ? current : undefined, pointers };
}

function collectElements(doc: Json): Element[] {
  const elements: Element[] = [];
  const walkSchema = (schema: unknown, pointer: string, chain: string[], seen: Set<string>) => {
    const { node, pointers } = follow(doc, schema, pointer);
    const where = pointers.at(-1)!;
    if (!node || seen.has(where)) return;
    seen = new Set(seen).add(where);
    chain = [...chain, ...pointers];
    for (const [name, property] of Object.entries(isObject(node.properties) ? node.properties : {})) {
      const at = `${where}/properties/${toPointer([name]).slice(1)}`;
      const target = follow(doc, property, at);
      elements.push({ pointer: at, what: `property ${name}`, aliases: target.pointers, chain: [...chain, ...target.pointers] });
      walkSchema(property, at, chain, seen);
    }
    for (const keyword of SCHEMA_CHILDREN) {
      if (Array.isArray(node[keyword]))
        for (const [i, s] of (node[keyword] as unknown[]).entries()) walkSchema(s, `${where}/${keyword}/${i}`, chain, seen);
    }
    if (isObject(node.items)) walkSchema(node.items, `${where}/items`, chain, seen);
    if (isObject(node.additionalProperties)) walkSchema(node.additionalProperties, `${where}/additionalProperties`, chain, seen);
  };
  const walkContent = (holder: Json, pointer: string, chain: string[]) => {
    for (const [type, media] of Object.entries(isObject(holder.content) ? holder.content : {})) {
      if (isObject(media)) walkSchema(media.schema, `${pointer}/content/${toPointer([type]).slice(1)}/schema`, chain, new Set());
    }
  };
  for (const [path, item] of Object.entries(isObject(doc.paths) ? doc.paths : {})) {
    if (!isObject(item)) continue;
    const itemPointer = toPointer(['paths', path]);
    for (const method of HTTP_METHODS) {
      if (!isObject(item[method])) continue;
      const op = item[method];
      const opPointer = `${itemPointer}/${method}`;
      const chain = [itemPointer, opPointer];
      elements.push({ pointer: opPointer, what: `operation ${String(op.operationId)}`, aliases: [opPointer], chain });
      const body = follow(doc, op.requestBody, `${opPointer}/requestBody`);
      if (body.node) walkContent(body.node, body.pointers.at(-1)!, [...chain, ...body.pointers]);
      for (const [status, raw] of Object.entries(isObject(op.responses) ? op.responses : {})) {
        const response = follow(doc, raw, `${opPointer}/responses/${status}`);
        elements.push({
          pointer: `${opPointer}/responses/${status}`,
          what: `response ${status} of ${String(op.operationId)}`,
          aliases: response.pointers,
          chain: [...chain, ...response.pointers],
        });
        if (response.node) walkContent(response.node, response.pointers.at(-1)!, [...chain, ...response.pointers]);
      }
    }
  }
  return elements;
}

/**
 * Findings for the elements of `doc` that no seed pointer reaches and no `x-origin: designed` covers, one
 * per element (a shared schema's property once).
 */
export function checkOrigin(doc: Json, file: string, seed: ReadonlySet<string>): Finding[] {
  const reached = (alias: string) => seed.has(alias) || [...seed].some((s) => s.startsWith(`${alias}/`));
  const designed = (pointer: string) => {
    const node = getAtPointer(doc, pointer);
    return isObject(node) && node['x-origin'] === 'designed';
  };
  const findings = new Map<string, Finding>();
  for (const e of collectElements(doc)) {
    if (findings.has(e.pointer) || e.aliases.some(reached) || e.chain.some(designed)) continue;
    findings.set(e.pointer, {
      file,
      tool: 'origin',
      rule: 'designed-without-origin',
      severity: 'error',
      pointer: e.pointer,
      message: `${e.what} is not in the seed table of specs/README.md and has no x-origin: designed (mark it, or add its seed row)`,
    });
  }
  return [...findings.values()];
}
