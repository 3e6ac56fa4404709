// Compares two versions of one OpenAPI 3.x document, both already dereferenced (load.ts): operations are
// matched by method and path template with parameter names ignored (`/a/{id}` is `/a/{vesselId}`), then
// parameters, request bodies, responses and security are compared in the direction they travel.
import { isObject, toPointer } from '../lib/contract/json-pointer.ts';
import { HTTP_METHODS } from '../lib/spec-catalog.ts';
import { ChangeLog, type Change } from './change.ts';
import { diffSchema } from './schema-diff.ts';

type Obj = Record<string, unknown>;

type Operation = { path: string; method: string; pointer: string; op: Obj; params: Map<string, Obj>; security: unknown };

/** `/a/{id}/b` -> `/a/{}/b`: the template a request matches, whatever its parameters are called. */
const templateOf = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
const obj = (v: unknown): Obj => (isObject(v) ? v : {});
const at = (pointer: string, ...segments: string[]) => pointer + toPointer(segments);

/** Parameters in effect (path level overridden by operation level), keyed so a renamed path parameter keeps its key. */
function parametersOf(path: string, item: Obj, op: Obj): Map<string, Obj> {
  const pathNames = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  const byKey = new Map<string, Obj>();
  for (const p of [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
    if (!isObject(p)) continue;
    const name = String(p.name);
    const key = p.in === 'path' ? `path:${pathNames.indexOf(name)}` : `${String(p.in)}:${p.in === 'header' ? name.toLowerCase() : name}`;
    byKey.set(key, p);
  }
  return byKey;
}

function operationsOf(doc: Obj): Map<string, Operation> {
  const ops = new Map<string, Operation>();
  for (const [path, rawItem] of Object.entries(obj(doc.paths))) {
    const item = obj(rawItem);
    for (const method of HTTP_METHODS) {
      if (!isObject(item[method])) continue;
      const op = item[method];
      ops.set(`${method} ${templateOf(path)}`, {
        path,
        method,
        pointer: at('/paths', path, method),
        op,
        params: parametersOf(path, item, op),
        security: op.security ?? doc.security,
      });
    }
  }
  return ops;
}

/** Compares two dereferenced OpenAPI documents; every change, breaking or not. */
export function diffDocuments(before: unknown, after: unknown): Change[] {
  const log = new ChangeLog();
  const oldOps = operationsOf(obj(before));
  const newOps = operationsOf(obj(after));
  for (const [key, old] of oldOps) {
    const now = newOps.get(key);
    const name = `${old.method.toUpperCase()} ${old.path}`;
    if (!now) log.add('operation-removed', true, old.pointer, `operation ${name} (${String(old.op.operationId)}) removed`);
    else diffOperation(old, now, log);
  }
  for (const [key, now] of newOps) {
    if (!oldOps.has(key))
      log.add(
        'operation-added',
        false,
        now.pointer,
        `operation ${now.method.toUpperCase()} ${now.path} (${String(now.op.operationId)}) added`,
      );
  }
  return log.changes;
}

function diffOperation(old: Operation, now: Operation, log: ChangeLog): void {
  const where = now.pointer;
  if (old.op.operationId !== now.op.operationId) {
    log.add(
      'operation-id-changed',
      true,
      where,
      `operationId changed from ${String(old.op.operationId)} to ${String(now.op.operationId)} (the SDK function is renamed)`,
    );
  }
  if (old.op.description !== now.op.description || old.op.summary !== now.op.summary)
    log.add('description-changed', false, where, 'operation description or summary changed');
  diffParameters(old, now, log);
  diffRequestBody(
    obj(old.op.requestBody),
    obj(now.op.requestBody),
    'requestBody' in old.op,
    'requestBody' in now.op,
    at(where, 'requestBody'),
    log,
  );
  diffResponses(obj(old.op.responses), obj(now.op.responses), at(where, 'responses'), log);
  diffSecurity(old.security, now.security, at(where, 'security'), log);
}

function diffParameters(old: Operation, now: Operation, log: ChangeLog): void {
  const where = at(now.pointer, 'parameters');
  for (const [key, p] of old.params) {
    const q = now.params.get(key);
    const label = `${String(p.in)} parameter ${String(p.name)}`;
    if (!q) {
      log.add('parameter-removed', true, at(where, String(p.name)), `${label} removed: the server no longer accepts it`);
      continue;
    }
    const loc = at(where, String(q.name));
    if (p.name !== q.name)
      log.add(
        'path-parameter-renamed',
        false,
        loc,
        `path parameter ${String(p.name)} renamed to ${String(q.name)} (same position, same URL)`,
      );
    if (p.required !== true && q.required === true) log.add('parameter-became-required', true, loc, `${label} became required`);
    if (p.required === true && q.required !== true) log.add('parameter-became-optional', false, loc, `${label} became optional`);
    if (p.description !== q.description) log.add('description-changed', false, loc, `${label} description changed`);
    diffSchema(p.schema, q.schema, 'request', at(loc, 'schema'), log);
  }
  for (const [key, q] of now.params) {
    if (old.params.has(key)) continue;
    const required = q.required === true;
    log.add(
      'parameter-added',
      required,
      at(where, String(q.name)),
      `${required ? 'required' : 'optional'} ${String(q.in)} parameter ${String(q.name)} added`,
    );
  }
}

function diffRequestBody(old: Obj, now: Obj, hadBody: boolean, hasBody: boolean, where: string, log: ChangeLog): void {
  if (hadBody && !hasBody) {
    log.add('request-body-removed', true, where, 'request body removed: the server no longer accepts one');
    return;
  }
  if (!hadBody && hasBody) {
    log.add('request-body-added', now.required === true, where, `${now.required === true ? 'required' : 'optional'} request body added`);
    return;
  }
  if (!hadBody) return;
  if (old.required !== true && now.required === true) log.add('request-body-became-required', true, where, 'request body became required');
  if (old.required === true && now.required !== true) log.add('request-body-became-optional', false, where, 'request body became optional');
  const oldContent = obj(old.content);
  const newContent = obj(now.content);
  for (const type of Object.keys(oldContent)) {
    const loc = at(where, 'content', type);
    if (!(type in newContent)) log.add('request-media-type-removed', true, loc, `request media type ${type} removed`);
    else diffMedia(obj(oldContent[type]), obj(newContent[type]), 'request', loc, log);
  }
  for (const type of Object.keys(newContent)) {
    if (!(type in oldContent)) log.add('request-media-type-added', false, at(where, 'content', type), `request media type ${type} added`);
  }
}

function diffMedia(old: Obj, now: Obj, direction: 'request' | 'response', where: string, log: ChangeLog): void {
  diffSchema(old.schema, now.schema, direction, at(where, 'schema'), log);
  if (JSON.stringify(old.examples ?? old.example) !== JSON.stringify(now.examples ?? now.example))
    log.add('examples-changed', false, where, 'examples changed');
}

function diffResponses(old: Obj, now: Obj, where: string, log: ChangeLog): void {
  for (const status of Object.keys(old)) {
    const loc = at(where, status);
    if (!(status in now)) {
      log.add('response-status-removed', true, loc, `response ${status} removed`);
      continue;
    }
    const [a, b] = [obj(old[status]), obj(now[status])];
    if (a.description !== b.description) log.add('description-changed', false, loc, `response ${status} description changed`);
    const [oldContent, newContent] = [obj(a.content), obj(b.content)];
    for (const type of Object.keys(oldContent)) {
      if (!(type in newContent))
        log.add('response-media-type-removed', true, at(loc, 'content', type), `response ${status} media type ${type} removed`);
      else diffMedia(obj(oldContent[type]), obj(newContent[type]), 'response', at(loc, 'content', type), log);
    }
    for (const type of Object.keys(newContent)) {
      if (!(type in oldContent))
        log.add('response-media-type-added', false, at(loc, 'content', type), `response ${status} media type ${type} added`);
    }
    const lower = (h: Obj) => new Map(Object.entries(h).map(([k, v]) => [k.toLowerCase(), [k, obj(v)] as const]));
    const [oldHeaders, newHeaders] = [lower(obj(a.headers)), lower(obj(b.headers))];
    for (const [name, [original, header]] of oldHeaders) {
      const next = newHeaders.get(name);
      if (!next) log.add('response-header-removed', true, at(loc, 'headers', original), `response ${status} header ${original} removed`);
      else diffSchema(header.schema, next[1].schema, 'response', at(loc, 'headers', next[0], 'schema'), log);
    }
    for (const [name, [original]] of newHeaders) {
      if (!oldHeaders.has(name))
        log.add('response-header-added', false, at(loc, 'headers', original), `response ${status} header ${original} added`);
    }
  }
  for (const status of Object.keys(now)) {
    if (!(status in old)) log.add('response-status-added', false, at(where, status), `response ${status} added`);
  }
}

/** Security requirements as alternatives (OR) of scheme sets (AND); none declared means anonymous. */
function alternatives(security: unknown): Map<string, Set<string>>[] {
  if (!Array.isArray(security) || security.length === 0) return [new Map()];
  return security.map(
    (req) =>
      new Map(Object.entries(obj(req)).map(([scheme, scopes]) => [scheme, new Set(Array.isArray(scopes) ? scopes.map(String) : [])])),
  );
}
const describe = (alt: Map<string, Set<string>>) =>
  alt.size === 0 ? 'no credentials' : [...alt].map(([s, scopes]) => (scopes.size ? `${s} (${[...scopes].join(' ')})` : s)).join(' + ');

/**
 * A client that satisfied an old alternative must still satisfy some new one: a new alternative asks no
 * scheme or scope the old one lacked. Otherwise a requirement was added, and that client is refused.
 */
function diffSecurity(old: unknown, now: unknown, where: string, log: ChangeLog): void {
  const before = alternatives(old);
  const after = alternatives(now);
  const covers = (have: Map<string, Set<string>>, asked: Map<string, Set<string>>) =>
    [...asked].every(([scheme, scopes]) => have.has(scheme) && [...scopes].every((s) => have.get(scheme)!.has(s)));
  for (const alt of before) {
    if (!after.some((candidate) => covers(alt, candidate))) {
      log.add(
        'security-requirement-added',
        true,
        where,
        `a client sending ${describe(alt)} is no longer enough: now ${after.map(describe).join(' or ')}`,
      );
    }
  }
  for (const alt of after) {
    if (!before.some((candidate) => covers(alt, candidate)))
      log.add('security-alternative-added', false, where, `${describe(alt)} is now accepted`);
  }
}
