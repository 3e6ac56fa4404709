// Compares two versions of one OpenAPI 3.x document, both already dereferenced (load.ts): operations are
// matched by method and path template with parameter names ignored (`/a/{id}` is `/a/{vesselId}`), then
// parameters, request bodies, responses and security are compared in the direction they travel; last,
// what lies outside operations (info, servers, components' security schemes and schemas). A schema in
// components is compared where operations use it, so its changes are listed under each such operation.
import { isObject, toPointer } from '../lib/contract/json-pointer.ts';
import { HTTP_METHODS } from '../lib/spec-catalog.ts';
import { type Change, ChangeLog, type OperationRef, type Place, type Subject } from './change.ts';
import { diffSchema } from './schema-diff.ts';

type Obj = Record<string, unknown>;

type Operation = { ref: OperationRef; pointer: string; op: Obj; params: Map<string, Obj>; security: unknown };

/** `/a/{id}/b` -> `/a/{}/b`: the template a request matches, whatever its parameters are called. */
const templateOf = (path: string) => path.replace(/\{[^}]+\}/g, '{}');
const obj = (v: unknown): Obj => (isObject(v) ? v : {});
const at = (pointer: string, ...segments: string[]) => pointer + toPointer(segments);
const quote = (s: unknown) => `"${String(s)}"`;

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
      const ref: OperationRef = { method: method.toUpperCase(), path };
      if (typeof op.operationId === 'string') ref.operationId = op.operationId;
      ops.set(`${method} ${templateOf(path)}`, {
        ref,
        pointer: at('/paths', path, method),
        op,
        params: parametersOf(path, item, op),
        security: op.security ?? doc.security,
      });
    }
  }
  return ops;
}

/**
 * Compares two dereferenced OpenAPI documents; every change, at its check's default severity.
 * @example diffDocuments(await loadDocument(oldText), await loadDocument(newText))
 */
export function diffDocuments(before: unknown, after: unknown): Change[] {
  const log = new ChangeLog();
  const oldOps = operationsOf(obj(before));
  const newOps = operationsOf(obj(after));
  for (const [key, old] of oldOps) {
    const now = newOps.get(key);
    if (!now) log.within(old.ref).add('operation-removed', old.pointer, 'operation removed');
    else diffOperation(old, now, log.within(now.ref));
  }
  for (const [key, now] of newOps) {
    if (!oldOps.has(key)) log.within(now.ref).add('operation-added', now.pointer, 'operation added');
  }
  diffOutsideOperations(obj(before), obj(after), log);
  return log.changes;
}

function diffOperation(old: Operation, now: Operation, log: ChangeLog): void {
  const where = now.pointer;
  if (old.op.operationId !== now.op.operationId) {
    log.add(
      'operation-id-changed',
      where,
      `operationId changed from ${String(old.op.operationId)} to ${String(now.op.operationId)} (the SDK function is renamed)`,
    );
  }
  if (old.op.description !== now.op.description || old.op.summary !== now.op.summary)
    log.add('operation-description-changed', where, 'summary or description changed');
  diffParameters(old, now, log);
  diffRequestBody(old.op, now.op, at(where, 'requestBody'), log);
  diffResponses(obj(old.op.responses), obj(now.op.responses), at(where, 'responses'), log);
  diffSecurity(old.security, now.security, at(where, 'security'), log);
}

function diffParameters(old: Operation, now: Operation, log: ChangeLog): void {
  const where = at(now.pointer, 'parameters');
  const label = (p: Obj) => `${String(p.in)} parameter ${quote(p.name)}`;
  for (const [key, p] of old.params) {
    const q = now.params.get(key);
    if (!q) {
      log.add('parameter-removed', at(where, String(p.name)), `${label(p)} removed (the server no longer accepts it)`);
      continue;
    }
    const loc = at(where, String(q.name));
    if (p.name !== q.name)
      log.add('path-parameter-renamed', loc, `path parameter ${quote(p.name)} renamed to ${quote(q.name)} (same position, same URL)`);
    if (p.required !== true && q.required === true) log.add('parameter-became-required', loc, `${label(q)} became required`);
    if (p.required === true && q.required !== true) log.add('parameter-became-optional', loc, `${label(q)} became optional`);
    if (p.description !== q.description) log.add('parameter-description-changed', loc, `${label(q)} description changed`);
    const subject: Subject = { root: label(q), field: `${label(q)} field`, path: [] };
    diffSchema(p.schema, q.schema, 'request', { pointer: at(loc, 'schema'), subject }, log);
  }
  for (const [key, q] of now.params) {
    if (old.params.has(key)) continue;
    const loc = at(where, String(q.name));
    if (q.required === true) log.add('required-parameter-added', loc, `required ${label(q)} added`);
    else log.add('optional-parameter-added', loc, `optional ${label(q)} added`);
  }
}

function diffRequestBody(oldOp: Obj, newOp: Obj, where: string, log: ChangeLog): void {
  const [hadBody, hasBody] = ['requestBody' in oldOp, 'requestBody' in newOp];
  const [old, now] = [obj(oldOp.requestBody), obj(newOp.requestBody)];
  if (hadBody && !hasBody) {
    log.add('request-body-removed', where, 'request body removed (the server no longer accepts one)');
    return;
  }
  if (!hadBody && hasBody) {
    if (now.required === true) log.add('required-request-body-added', where, 'required request body added');
    else log.add('optional-request-body-added', where, 'optional request body added');
    return;
  }
  if (!hadBody) return;
  if (old.required !== true && now.required === true) log.add('request-body-became-required', where, 'request body became required');
  if (old.required === true && now.required !== true) log.add('request-body-became-optional', where, 'request body became optional');
  const oldContent = obj(old.content);
  const newContent = obj(now.content);
  const several = Object.keys(newContent).length > 1;
  for (const type of Object.keys(oldContent)) {
    const loc = at(where, 'content', type);
    if (!(type in newContent)) log.add('request-media-type-removed', loc, `request media type ${type} removed`);
    else {
      const subject: Subject = { root: 'request body', field: 'request field', path: [], ...(several ? { media: type } : {}) };
      diffMedia(obj(oldContent[type]), obj(newContent[type]), 'request', { pointer: loc, subject }, log);
    }
  }
  for (const type of Object.keys(newContent)) {
    if (!(type in oldContent)) log.add('request-media-type-added', at(where, 'content', type), `request media type ${type} added`);
  }
}

function diffMedia(old: Obj, now: Obj, direction: 'request' | 'response', place: Place, log: ChangeLog): void {
  diffSchema(old.schema, now.schema, direction, { ...place, pointer: at(place.pointer, 'schema') }, log);
  if (JSON.stringify(old.examples ?? old.example) !== JSON.stringify(now.examples ?? now.example)) {
    const media = place.subject.media ? ` (${place.subject.media})` : '';
    log.add('examples-changed', place.pointer, `${place.subject.root}${media} examples changed`);
  }
}

function diffResponses(old: Obj, now: Obj, where: string, log: ChangeLog): void {
  for (const status of Object.keys(old)) {
    const loc = at(where, status);
    if (!(status in now)) {
      log.add('response-status-removed', loc, `response ${status} removed`);
      continue;
    }
    const [a, b] = [obj(old[status]), obj(now[status])];
    if (a.description !== b.description) log.add('response-description-changed', loc, `response ${status} description changed`);
    const [oldContent, newContent] = [obj(a.content), obj(b.content)];
    const several = Object.keys(newContent).length > 1;
    for (const type of Object.keys(oldContent)) {
      if (!(type in newContent))
        log.add('response-media-type-removed', at(loc, 'content', type), `response ${status} media type ${type} removed`);
      else {
        const subject: Subject = {
          root: `response ${status} body`,
          field: `response ${status} field`,
          path: [],
          ...(several ? { media: type } : {}),
        };
        diffMedia(obj(oldContent[type]), obj(newContent[type]), 'response', { pointer: at(loc, 'content', type), subject }, log);
      }
    }
    for (const type of Object.keys(newContent)) {
      if (!(type in oldContent))
        log.add('response-media-type-added', at(loc, 'content', type), `response ${status} media type ${type} added`);
    }
    const lower = (h: Obj) => new Map(Object.entries(h).map(([k, v]) => [k.toLowerCase(), [k, obj(v)] as const]));
    const [oldHeaders, newHeaders] = [lower(obj(a.headers)), lower(obj(b.headers))];
    for (const [name, [original, header]] of oldHeaders) {
      const next = newHeaders.get(name);
      if (!next) {
        log.add('response-header-removed', at(loc, 'headers', original), `response ${status} header ${quote(original)} removed`);
        continue;
      }
      const label = `response ${status} header ${quote(next[0])}`;
      const place = { pointer: at(loc, 'headers', next[0], 'schema'), subject: { root: label, field: `${label} field`, path: [] } };
      diffSchema(header.schema, next[1].schema, 'response', place, log);
    }
    for (const [name, [original]] of newHeaders) {
      if (!oldHeaders.has(name))
        log.add('response-header-added', at(loc, 'headers', original), `response ${status} header ${quote(original)} added`);
    }
  }
  for (const status of Object.keys(now)) {
    if (!(status in old)) log.add('response-status-added', at(where, status), `response ${status} added`);
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
const describeAlternative = (alt: Map<string, Set<string>>) =>
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
        where,
        `a client sending ${describeAlternative(alt)} is no longer enough: now ${after.map(describeAlternative).join(' or ')}`,
      );
    }
  }
  for (const alt of after) {
    if (!before.some((candidate) => covers(alt, candidate)))
      log.add('security-alternative-added', where, `${describeAlternative(alt)} is now accepted`);
  }
}

/** What a client's credentials depend on in a security scheme (not its description). */
const SCHEME_KEYS = ['type', 'scheme', 'in', 'name', 'openIdConnectUrl'] as const;

/** info, servers, components' security schemes and schemas: listed spec-wide, not under an operation. */
function diffOutsideOperations(before: Obj, after: Obj, log: ChangeLog): void {
  const [oldInfo, newInfo] = [obj(before.info), obj(after.info)];
  const texts = ['title', 'summary', 'description'].filter((key) => oldInfo[key] !== newInfo[key]);
  if (texts.length > 0) log.add('api-description-changed', '/info', `info ${texts.join(', ')} changed`);

  const urls = (doc: Obj) => (Array.isArray(doc.servers) ? doc.servers.map((s) => String(obj(s).url)) : []);
  const [oldUrls, newUrls] = [urls(before), urls(after)];
  for (const url of oldUrls) if (!newUrls.includes(url)) log.add('server-removed', '/servers', `server ${url} removed`);
  for (const url of newUrls) if (!oldUrls.includes(url)) log.add('server-added', '/servers', `server ${url} added`);

  const [oldSchemes, newSchemes] = [obj(obj(before.components).securitySchemes), obj(obj(after.components).securitySchemes)];
  for (const [name, scheme] of Object.entries(oldSchemes)) {
    const pointer = at('/components/securitySchemes', name);
    if (!(name in newSchemes)) {
      log.add('security-scheme-removed', pointer, `security scheme ${quote(name)} removed`);
      continue;
    }
    const [a, b] = [obj(scheme), obj(newSchemes[name])];
    for (const key of SCHEME_KEYS) {
      if (a[key] !== b[key])
        log.add(
          'security-scheme-changed',
          pointer,
          `security scheme ${quote(name)} ${key} changed from ${String(a[key] ?? 'none')} to ${String(b[key] ?? 'none')}`,
        );
    }
  }
  for (const name of Object.keys(newSchemes))
    if (!(name in oldSchemes))
      log.add('security-scheme-added', at('/components/securitySchemes', name), `security scheme ${quote(name)} added`);

  const [oldSchemas, newSchemas] = [obj(obj(before.components).schemas), obj(obj(after.components).schemas)];
  for (const name of Object.keys(oldSchemas))
    if (!(name in newSchemas))
      log.add('component-schema-removed', at('/components/schemas', name), `schema ${quote(name)} removed from components`);
  for (const name of Object.keys(newSchemas))
    if (!(name in oldSchemas))
      log.add('component-schema-added', at('/components/schemas', name), `schema ${quote(name)} added to components`);
}
