import type { SchemaAt, SchemaRange } from './declaration-check.ts';
import { isRecord, own } from './model.ts';
import { prepareDeclaration, type PreparedDeclaration } from './prepared.ts';
import { readDeployRequest, type DeployRequest } from './request.ts';

export type RequestQuery = { updateMode?: DeployRequest['updateMode'] };

/** A deployment request as the event loop needs it: its small fields, and its declaration prepared (prepared.ts). */
export type ReadyRequest = Omit<DeployRequest, 'declaration'> & { declaration?: PreparedDeclaration };

/**
 * A deployment request checked and planned: the body was not JSON (`malformed`), every problem of the
 * body, or the request ready to run. What is sent back from the checker's thread is strings and small
 * plans whatever the body.
 */
export type CheckedRequest = { ok: false; malformed: true } | { ok: false; errors: string[] } | { ok: true; request: ReadyRequest };

/**
 * Reads a `POST /declare` body (request.ts) and prepares its declaration (prepared.ts): all the work
 * that grows with the body, so that it can run on a worker thread (declaration-checker.ts). Plans
 * need nothing of what is deployed (a tenant's references stay within it), so they can be made here.
 *
 * @example
 * const checked = checkDeployRequest(body, schemaAt, { schemaMinimum: '3.0.0', schemaCurrent: '3.50.0' }, {});
 * if (checked.ok) for (const [tenant, prepared] of checked.request.declaration?.tenants ?? []) console.log(tenant, prepared.kind);
 */
export function checkDeployRequest(body: unknown, schemaAt: SchemaAt, info: SchemaRange, query: RequestQuery): CheckedRequest {
  const read = readDeployRequest(body, schemaAt, info, query);
  if (!read.ok) return read;
  const { declaration, ...request } = read.request;
  return { ok: true, request: declaration ? { ...request, declaration: prepareDeclaration(declaration) } : request };
}

/** checkDeployRequest of a body's text; text that is not JSON is `malformed`. */
export function checkDeployText(text: string, schemaAt: SchemaAt, info: SchemaRange, query: RequestQuery): CheckedRequest {
  const body = parsed(text);
  return body === MALFORMED ? { ok: false, malformed: true } : checkDeployRequest(body, schemaAt, info, query);
}

/**
 * A queued deployment as saved (storedRequestText) checked again after a restart. A row saved before
 * the body was kept as posted (`{action, persist, redeployAge, updateMode, declaration}`) is read as
 * the `AS3` request it came from.
 */
export function checkStoredRequest(text: string, schemaAt: SchemaAt, info: SchemaRange): CheckedRequest {
  const stored = parsed(text);
  if (!isRecord(stored)) return { ok: false, malformed: true };
  if (Object.hasOwn(stored, 'body'))
    return checkDeployRequest(own(stored, 'body'), schemaAt, info, (own(stored, 'query') ?? {}) as RequestQuery);
  const { dryRun: _, updateMode, ...legacy } = stored;
  return checkDeployRequest(
    { class: 'AS3', ...legacy },
    schemaAt,
    info,
    typeof updateMode === 'string' ? { updateMode: updateMode as RequestQuery['updateMode'] } : {},
  );
}

/** The text a queued deployment is saved as: the body as posted and its query, re-checked after a restart. */
export const storedRequestText = (bodyText: string, query: RequestQuery) => `{"query":${JSON.stringify(query)},"body":${bodyText}}`;

/** A saved declaration (the history, or the saved tenants) prepared again without a schema check: it was checked when deployed. */
export function prepareDeclarationText(text: string): { ok: true; declaration: PreparedDeclaration } | { ok: false; malformed: true } {
  const declaration = parsed(text);
  return isRecord(declaration) ? { ok: true, declaration: prepareDeclaration(declaration) } : { ok: false, malformed: true };
}

const MALFORMED = Symbol('malformed');

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return MALFORMED;
  }
}
